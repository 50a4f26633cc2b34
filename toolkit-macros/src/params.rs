//! What each parameter is. Nothing is classified by guessing from a type's name: `#[preset]`
//! and `#[ctx]` say a parameter is hidden; everything else is visible. The only type-shape rule
//! is that a visible `Option<T>` is not required (absent means `None`), as in clap's derive.
//!
//! Invariant: every parameter that has a plain name gets exactly one [`Kind`], and its wire
//! name is the one the model sees. Attribute combinations that cannot be honoured (a hidden
//! parameter with a default, ...) are classified anyway and refused by `validate`.

use syn::{Expr, Ident, Pat, PatType, Type};

use crate::attr::{self, HiddenKind, ParamAttrs};
use crate::errors::Errors;

pub(crate) enum Kind {
    /// Visible, and the model must send it.
    Required,
    /// Visible `Option<T>`: absent means `None`.
    Optional,
    /// Visible with `#[arg(default = ..)]`: absent means the expression.
    Defaulted(Expr),
    /// Hidden, bound at registration (`#[preset]`).
    Preset,
    /// Hidden, injected by type from the context (`#[ctx]`).
    Context,
}

pub(crate) struct Param {
    pub ident: Ident,
    pub ty: Type,
    /// The name the model sends (after `#[arg(rename)]`).
    pub wire_name: String,
    pub kind: Kind,
    /// For the model: `#[arg(description)]`, else the `///` lines.
    pub description: Option<String>,
    /// The attributes as written, for `validate`'s spans.
    pub attrs: ParamAttrs,
}

impl Param {
    /// Filled from the argument JSON (visible or preset), as opposed to the context.
    pub(crate) fn is_json(&self) -> bool {
        !matches!(self.kind, Kind::Context)
    }
}

/// Classify one parameter, taking the macro's attributes off it.
pub(crate) fn classify(arg: &mut PatType, errors: &mut Errors) -> Option<Param> {
    let attrs = ParamAttrs::take(&mut arg.attrs, errors);
    let ident = match &*arg.pat {
        Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => p.ident.clone(),
        other => {
            errors.at(
                other,
                "a tool parameter must be a plain name (`name: Type`) because the name is what the model sends; destructure inside the function",
            );
            return None;
        }
    };
    let ty = (*arg.ty).clone();
    let wire_name = match &attrs.rename {
        Some(rename) => rename.value.value(),
        None => unraw(&ident),
    };
    let kind = match (&attrs.hidden, &attrs.default) {
        (Some(HiddenKind::Preset), _) => Kind::Preset,
        (Some(HiddenKind::Ctx), _) => Kind::Context,
        (None, Some(default)) => Kind::Defaulted(default.value.clone()),
        (None, None) if is_option(&ty) => Kind::Optional,
        (None, None) => Kind::Required,
    };
    let description = match &attrs.description {
        Some(d) => Some(d.value.value()),
        None if attrs.docs.is_empty() => None,
        None => Some(attr::join_docs(&attrs.docs)),
    };
    Some(Param {
        ident,
        ty,
        wire_name,
        kind,
        description,
        attrs,
    })
}

/// `r#type` → `type`: the model sees the name without the raw prefix.
pub(crate) fn unraw(ident: &Ident) -> String {
    let name = ident.to_string();
    match name.strip_prefix("r#") {
        Some(bare) => bare.to_string(),
        None => name,
    }
}

/// `Option<T>`, `std::option::Option<T>` or `core::option::Option<T>`. A renamed import
/// (`use Option as Maybe`) is not recognized; `#[arg(default)]` says the same thing explicitly.
fn is_option(ty: &Type) -> bool {
    let Type::Path(tp) = ty else { return false };
    if tp.qself.is_some() {
        return false;
    }
    let segments: Vec<String> = tp
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let names: Vec<&str> = segments.iter().map(String::as_str).collect();
    matches!(
        names.as_slice(),
        ["Option"] | ["std" | "core", "option", "Option"]
    ) && matches!(
        tp.path.segments.last().map(|s| &s.arguments),
        Some(syn::PathArguments::AngleBracketed(a)) if a.args.len() == 1
    )
}
