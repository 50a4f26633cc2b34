//! The grammar of the macros' attributes, read into typed values that keep their original
//! tokens for spans:
//!
//! - `#[tool(...)]`: `name`, `description`, `group` (repeatable), the flags `read_only`,
//!   `idempotent`, `destructive`, `sequential`, `background`, `requires_approval`, `defer_loading`,
//!   `timeout = "30s"`, `retries = N`, `max_output_bytes = N`, `crate = "path"`;
//! - `#[tools(...)]`: `crate = "path"`;
//! - on a parameter: `#[arg(rename = "..", default = <expr> | default, description = "..")]`,
//!   `#[preset]`, `#[ctx]`, and `///` lines.
//!
//! Invariant: each option is read once — a repetition is an error at its second occurrence —
//! and each value is checked for its own shape here. Whether options make sense *together*
//! is `validate`'s question.
//!
//! This module holds what all of them share — `key` / `key = value` entries, the duplicate
//! rule, the common value shapes, doc lines; `tool` holds `#[tool]` and `#[tools]`, `param`
//! the parameter attributes.

mod param;
mod tool;

pub(crate) use param::{HiddenKind, ParamAttrs};
pub(crate) use tool::{Flag, ToolAttr, ToolsAttr};

use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitStr, Meta, Token};

use crate::errors::Errors;

/// An option as written: its key (for spans and order) and its checked value.
pub(crate) struct Opt<T> {
    pub key: Ident,
    pub value: T,
    /// Position among the options of its attribute, to tell which of two came second.
    pub order: usize,
}

/// Remembers which keys an attribute (or a parameter's `#[arg]`s) already gave.
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    /// `true` the first time; afterwards an error at this (the repeated) key.
    fn first(&mut self, key: &Ident, attr: &str, errors: &mut Errors) -> bool {
        let name = key.to_string();
        if self.0.contains(&name) {
            errors.at(
                key,
                format!("duplicate {attr} option `{name}`; give it once"),
            );
            return false;
        }
        self.0.push(name);
        true
    }
}

/// `key` or `key = <expr>`. Keys may be keywords (`crate`).
struct Entry {
    key: Ident,
    eq: Option<Token![=]>,
    value: Option<Expr>,
    order: usize,
}

impl Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Entry> {
        let key = Ident::parse_any(input)?;
        let eq: Option<Token![=]> = input.parse()?;
        let value = match eq {
            Some(_) => Some(input.parse()?),
            None => None,
        };
        Ok(Entry {
            key,
            eq,
            value,
            order: 0,
        })
    }
}

/// The entries of an attribute's list, in order; a syntax error is reported and ends the list.
fn entries(tokens: TokenStream, errors: &mut Errors) -> Vec<Entry> {
    match Punctuated::<Entry, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(list) => list
            .into_iter()
            .enumerate()
            .map(|(order, entry)| Entry { order, ..entry })
            .collect(),
        Err(e) => {
            errors.push(e);
            Vec::new()
        }
    }
}

impl Entry {
    fn opt<T>(&self, value: T) -> Opt<T> {
        Opt {
            key: self.key.clone(),
            value,
            order: self.order,
        }
    }

    /// The whole entry, for an error that concerns all of it.
    fn tokens(&self) -> TokenStream {
        let (key, eq, value) = (&self.key, &self.eq, &self.value);
        quote!(#key #eq #value)
    }

    fn literal(&self) -> Option<&Lit> {
        match &self.value {
            Some(Expr::Lit(ExprLit { lit, .. })) => Some(lit),
            _ => None,
        }
    }

    fn string(&self, errors: &mut Errors) -> Option<LitStr> {
        match self.literal() {
            Some(Lit::Str(s)) => Some(s.clone()),
            _ => {
                errors.at(self.tokens(), format!("expected `{} = \"...\"`", self.key));
                None
            }
        }
    }

    fn flag(&self, errors: &mut Errors) -> Option<bool> {
        match (&self.value, self.literal()) {
            (None, _) => Some(true),
            (_, Some(Lit::Bool(b))) => Some(b.value),
            _ => {
                let key = &self.key;
                errors.at(
                    self.tokens(),
                    format!("`{key}` is a flag: write `{key}` or `{key} = true`"),
                );
                None
            }
        }
    }
}

/// The text of one `///` line (a `#[doc = ".."]` attribute).
pub(crate) fn doc_line(attr: &Attribute) -> Option<String> {
    if !attr.path().is_ident("doc") {
        return None;
    }
    match &attr.meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    }
}

/// Doc lines to a description: one leading space removed per line, blank lines kept as
/// paragraph breaks, surrounding whitespace trimmed.
pub(crate) fn join_docs(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}
