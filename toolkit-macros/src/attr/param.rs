//! The parameter attributes: `#[arg(..)]`, `#[preset]`, `#[ctx]` and `///` lines.

use syn::{Attribute, Expr, LitStr, Meta};

use super::{Opt, Seen, doc_line, entries};
use crate::errors::Errors;

/// Which hidden-parameter marker a parameter carries.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum HiddenKind {
    Preset,
    Ctx,
}

impl HiddenKind {
    pub(crate) fn attr(self) -> &'static str {
        match self {
            HiddenKind::Preset => "#[preset]",
            HiddenKind::Ctx => "#[ctx]",
        }
    }
}

/// The macro's attributes on one parameter.
#[derive(Default)]
pub(crate) struct ParamAttrs {
    /// `#[preset]` or `#[ctx]`.
    pub hidden: Option<HiddenKind>,
    pub rename: Option<Opt<LitStr>>,
    pub default: Option<Opt<Expr>>,
    pub description: Option<Opt<LitStr>>,
    /// `///` lines.
    pub docs: Vec<String>,
}

impl ParamAttrs {
    /// Read the macro's attributes off a parameter, leaving only the others on it, so the
    /// function can be emitted again unchanged otherwise.
    pub(crate) fn take(attrs: &mut Vec<Attribute>, errors: &mut Errors) -> ParamAttrs {
        let mut out = ParamAttrs::default();
        let mut seen = Seen::default();
        for attr in std::mem::take(attrs) {
            let marker = if attr.path().is_ident("preset") {
                Some(HiddenKind::Preset)
            } else if attr.path().is_ident("ctx") {
                Some(HiddenKind::Ctx)
            } else {
                None
            };
            if let Some(kind) = marker {
                out.marker(kind, attr, errors);
            } else if attr.path().is_ident("arg") {
                out.arg(&attr, &mut seen, errors);
            } else if attr.path().is_ident("doc") {
                // Read, not kept: Rust allows no doc comments on parameters.
                out.docs.extend(doc_line(&attr));
            } else {
                attrs.push(attr);
            }
        }
        out
    }

    fn marker(&mut self, kind: HiddenKind, attr: Attribute, errors: &mut Errors) {
        let which = kind.attr();
        if !matches!(attr.meta, Meta::Path(_)) {
            errors.at(
                &attr.meta,
                format!("`{which}` takes no arguments; write `{which}`"),
            );
        }
        match self.hidden {
            Some(first) if first == kind => {
                errors.at(&attr, format!("duplicate `{which}`; give it once"))
            }
            Some(first) => errors.at(
                &attr,
                format!(
                    "a parameter cannot be both `{}` and `{which}`: use `#[preset]` for a value bound at registration, `#[ctx]` for a value injected by type from the context",
                    first.attr()
                ),
            ),
            None => self.hidden = Some(kind),
        }
    }

    fn arg(&mut self, attr: &Attribute, seen: &mut Seen, errors: &mut Errors) {
        let tokens = match &attr.meta {
            Meta::List(list) => list.tokens.clone(),
            _ => {
                errors.at(
                    attr,
                    "write `#[arg(option, ...)]`, e.g. `#[arg(rename = \"q\")]`",
                );
                return;
            }
        };
        for entry in entries(tokens, errors) {
            let key = entry.key.to_string();
            if !matches!(key.as_str(), "rename" | "default" | "description") {
                errors.at(
                    entry.tokens(),
                    "unknown `#[arg]` option; expected `rename = \"..\"`, `default = <expr>`, `default` or `description = \"..\"`",
                );
                continue;
            }
            if !seen.first(&entry.key, "#[arg]", errors) {
                continue;
            }
            match key.as_str() {
                "rename" => {
                    self.rename = entry.string(errors).map(|s| {
                        if s.value().is_empty() {
                            errors.at(
                                &s,
                                "`rename` cannot be empty; give the name the model should use",
                            );
                        }
                        entry.opt(s)
                    })
                }
                "description" => self.description = entry.string(errors).map(|s| entry.opt(s)),
                // `default`, the last key `arg` knows.
                _ => {
                    let expr = match entry.value.clone() {
                        Some(expr) => expr,
                        None => {
                            syn::parse_quote_spanned!(entry.key.span()=> ::core::default::Default::default())
                        }
                    };
                    self.default = Some(entry.opt(expr));
                }
            }
        }
    }
}
