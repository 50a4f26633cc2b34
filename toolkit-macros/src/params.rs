//! What each parameter is. Nothing is classified by guessing from a type's name: `#[preset]`
//! and `#[ctx]` say a parameter is hidden; everything else is visible. The only type-shape rule
//! is that a visible `Option<T>` is not required (absent means `None`), as in clap's derive.

use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitStr, Meta, Pat, PatType, Token, Type};

use crate::errors::Errors;

pub(crate) enum Kind {
    Required,
    Optional,
    Defaulted(Expr),
    Preset,
    Context,
}

pub(crate) struct Param {
    pub ident: Ident,
    pub ty: Type,
    pub wire_name: String,
    pub kind: Kind,
    pub description: Option<String>,
}

/// Classify one parameter and strip the attributes only the macro understands, so the
/// function can be emitted again unchanged otherwise.
pub(crate) fn classify(arg: &mut PatType, errors: &mut Errors) -> Option<Param> {
    let attrs = std::mem::take(&mut arg.attrs);
    let mut hidden: Option<(&'static str, Attribute)> = None;
    let mut rename: Option<LitStr> = None;
    let mut default: Option<Expr> = None;
    let mut description: Option<LitStr> = None;
    let mut docs: Vec<String> = Vec::new();
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("doc") {
            if let Some(line) = doc_line(&attr) {
                docs.push(line);
            }
        } else if path.is_ident("preset") || path.is_ident("ctx") {
            let which = if path.is_ident("preset") {
                "preset"
            } else {
                "ctx"
            };
            if !matches!(attr.meta, Meta::Path(_)) {
                errors.at(&attr.meta, format!("`#[{which}]` takes no arguments"));
            }
            match &hidden {
                Some((first, _)) if *first == which => {
                    errors.at(&attr, format!("duplicate `#[{which}]`"));
                }
                Some((first, _)) => errors.at(
                    &attr,
                    format!(
                        "a parameter cannot be both `#[{first}]` and `#[{which}]`: use `#[preset]` for a value bound at registration, `#[ctx]` for a value injected by type from the context"
                    ),
                ),
                None => hidden = Some((which, attr)),
            }
        } else if path.is_ident("arg") {
            parse_arg(&attr, &mut rename, &mut default, &mut description, errors);
        } else {
            arg.attrs.push(attr);
        }
    }

    let ident = match &*arg.pat {
        Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => p.ident.clone(),
        other => {
            errors.at(other, "a tool parameter must be a plain name (`name: Type`) because the name is what the model sends; destructure inside the function");
            return None;
        }
    };
    let ty = (*arg.ty).clone();
    let name = ident.to_string();
    let wire_name = rename
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_else(|| name.strip_prefix("r#").unwrap_or(&name).to_string());
    if let Some(r) = rename.as_ref().filter(|r| r.value().is_empty()) {
        errors.at(r, "`rename` cannot be empty");
    }

    let kind = match hidden {
        Some((which, attr)) => {
            if let Some(d) = &default {
                errors.at(d, format!("a `#[{which}]` parameter is hidden from the model and cannot have a default; remove `default`"));
            }
            if let Some(d) = &description {
                errors.at(d, format!("a `#[{which}]` parameter is hidden from the model, so a description would never be shown; use a `///` comment for readers instead"));
            }
            if which == "ctx" && rename.is_some() {
                errors.at(
                    &attr,
                    "a `#[ctx]` parameter is injected by type; `rename` has no meaning for it",
                );
            }
            if which == "preset" {
                Kind::Preset
            } else {
                Kind::Context
            }
        }
        None => match default {
            Some(expr) => Kind::Defaulted(expr),
            None if is_option(&ty) => Kind::Optional,
            None => Kind::Required,
        },
    };
    let description = description
        .map(|d| d.value())
        .or_else(|| (!docs.is_empty()).then(|| join_docs(&docs)));
    Some(Param {
        ident,
        ty,
        wire_name,
        kind,
        description,
    })
}

fn parse_arg(
    attr: &Attribute,
    rename: &mut Option<LitStr>,
    default: &mut Option<Expr>,
    description: &mut Option<LitStr>,
    errors: &mut Errors,
) {
    let metas = match attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) {
        Ok(m) => m,
        Err(e) => {
            errors.push(e);
            return;
        }
    };
    for meta in metas {
        let key = meta
            .path()
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        match (key.as_str(), &meta) {
            ("rename", Meta::NameValue(nv)) => match lit_str(&nv.value) {
                Some(s) if rename.is_none() => *rename = Some(s),
                Some(_) => errors.at(&meta, "duplicate `rename`"),
                None => errors.at(&nv.value, "expected `rename = \"name\"`"),
            },
            ("description", Meta::NameValue(nv)) => match lit_str(&nv.value) {
                Some(s) if description.is_none() => *description = Some(s),
                Some(_) => errors.at(&meta, "duplicate `description`"),
                None => errors.at(&nv.value, "expected `description = \"...\"`"),
            },
            ("default", Meta::NameValue(nv)) if default.is_none() => *default = Some(nv.value.clone()),
            ("default", Meta::Path(p)) if default.is_none() => {
                *default = Some(syn::parse_quote_spanned!(syn::spanned::Spanned::span(p)=> ::core::default::Default::default()))
            }
            ("default", _) => errors.at(&meta, "duplicate `default`"),
            _ => errors.at(
                &meta,
                "unknown `#[arg]` option; expected `rename = \"..\"`, `default = <expr>`, `default` or `description = \"..\"`",
            ),
        }
    }
}

fn lit_str(expr: &Expr) -> Option<LitStr> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        _ => None,
    }
}

/// The text of one `///` line (a `#[doc = ".."]` attribute).
pub(crate) fn doc_line(attr: &Attribute) -> Option<String> {
    match &attr.meta {
        Meta::NameValue(nv) => lit_str(&nv.value).map(|s| s.value()),
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

/// `Option<T>`, `std::option::Option<T>` or `core::option::Option<T>`.
fn is_option(ty: &Type) -> bool {
    let Type::Path(tp) = ty else { return false };
    if tp.qself.is_some() {
        return false;
    }
    let segs: Vec<String> = tp
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let plain = matches!(
        segs.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["Option"] | ["std" | "core", "option", "Option"]
    );
    plain
        && matches!(
            &tp.path.segments.last().map(|s| &s.arguments),
            Some(syn::PathArguments::AngleBracketed(a)) if a.args.len() == 1
        )
}
