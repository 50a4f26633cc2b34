//! A tool function checked and turned into the model `expand` generates code from.

use proc_macro2::TokenStream;
use syn::{Attribute, FnArg, Ident, ReturnType, Signature, Type};

use crate::errors::Errors;
use crate::options::{self, ToolOptions};
use crate::params::{self, Param};

pub(crate) struct ToolFn {
    pub fn_ident: Ident,
    pub name: String,
    pub description: String,
    pub params: Vec<Param>,
    pub ret: Type,
    pub is_async: bool,
    pub options: ToolOptions,
}

/// Where the function was found: free, or a method of a `#[tools]` impl block.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Free,
    Method,
}

pub(crate) fn analyze(
    attr: TokenStream,
    attrs: &[Attribute],
    sig: &mut Signature,
    place: Place,
    errors: &mut Errors,
) -> Option<ToolFn> {
    let options = options::parse(attr, errors);

    if !sig.generics.params.is_empty() {
        errors.at(
            &sig.generics,
            "a tool cannot be generic: the model calls it with one concrete JSON schema; use concrete types, or write one `#[tool]` wrapper per type",
        );
    }
    if let Some(w) = &sig.generics.where_clause {
        errors.at(
            w,
            "a tool cannot have a `where` clause: it cannot be generic",
        );
    }
    if let Some(u) = &sig.unsafety {
        errors.at(
            u,
            "a tool cannot be `unsafe fn`: the model would call it without upholding its contract",
        );
    }
    if let Some(v) = &sig.variadic {
        errors.at(v, "a tool cannot be variadic");
    }

    let mut params = Vec::new();
    let mut saw_receiver = false;
    for input in sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(r) => {
                saw_receiver = true;
                match place {
                    Place::Free => errors.at(
                        &*r,
                        "`#[tool]` on a method needs `#[tools]` on its `impl` block: put `#[tools]` on the impl",
                    ),
                    Place::Method if r.reference.is_none() || r.colon_token.is_some() => errors.at(
                        &*r,
                        "a tool method must take `&self`: the value is shared behind an `Arc` by every call, so it cannot be moved or replaced; keep state in fields (use a Mutex for changes)",
                    ),
                    Place::Method if r.mutability.is_some() => errors.at(
                        &*r,
                        "a tool method must take `&self`, not `&mut self`: calls may run in parallel; keep mutable state behind a Mutex or atomics",
                    ),
                    Place::Method => {}
                }
            }
            FnArg::Typed(pt) => {
                if let Some(p) = params::classify(pt, errors) {
                    params.push(p);
                }
            }
        }
    }
    if place == Place::Method && !saw_receiver {
        errors.at(
            &sig.ident,
            "a `#[tool]` method in a `#[tools]` impl must take `&self`; move associated functions without `self` out and make them free `#[tool]` functions",
        );
    }
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.wire_name == p.wire_name) {
            errors.at(&p.ident, format!("two parameters are named `{}` for the model; use `#[arg(rename = \"..\")]` on one", p.wire_name));
        }
    }

    let docs: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(params::doc_line)
        .collect();
    let description = match &options.description {
        Some(d) => d.value(),
        None => params::join_docs(&docs),
    };
    if description.is_empty() {
        errors.at(
            &sig.ident,
            "a tool needs a description: the model reads it to decide when to call the tool; add a `///` doc comment or `#[tool(description = \"...\")]`",
        );
    }

    let ret = match &sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    let fn_ident = sig.ident.clone();
    let raw = fn_ident.to_string();
    let name = options
        .name
        .as_ref()
        .map(|n| n.value())
        .unwrap_or_else(|| raw.strip_prefix("r#").unwrap_or(&raw).to_string());
    Some(ToolFn {
        fn_ident,
        name,
        description,
        params,
        ret,
        is_async: sig.asyncness.is_some(),
        options,
    })
}

/// `get_weather` → `GetWeather`.
pub(crate) fn pascal_case(name: &str) -> String {
    name.trim_start_matches("r#")
        .split('_')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let mut c = s.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}
