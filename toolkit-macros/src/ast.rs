//! The internal model: a tool function (free, or a method of a `#[tools]` block) and a
//! `#[tools]` block, read from the syntax tree.
//!
//! Invariant: reading never refuses anything that `validate` can explain better — it records
//! what was written, keeping the original tokens (signature, receiver, attributes) so that
//! every later error can point at the offending token. Reading strips the macro's own
//! attributes from the item, so the item can be emitted again whatever happens next.

use proc_macro2::TokenStream;
use syn::{Attribute, FnArg, Ident, ImplItem, ItemImpl, Meta, ReturnType, Signature, Type};

use crate::attr::{self, ToolAttr, ToolsAttr};
use crate::errors::Errors;
use crate::params::{self, Param};

/// Where a tool function was found.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Free,
    Method,
}

/// One tool function.
pub(crate) struct ToolFn {
    pub attr: ToolAttr,
    /// The signature as it is emitted again (parameter attributes of the macro removed).
    pub sig: Signature,
    pub place: Place,
    /// The tool's name: `#[tool(name)]`, else the function's name.
    pub name: String,
    /// `#[tool(description)]`, else the doc comment; may be empty (refused by `validate`).
    pub description: String,
    /// The parameters with a plain name, in signature order (the others are already errors).
    pub params: Vec<Param>,
    /// The return type (`()` when there is none).
    pub ret: Type,
}

impl ToolFn {
    pub(crate) fn read(
        attr: ToolAttr,
        attrs: &[Attribute],
        sig: &mut Signature,
        place: Place,
        errors: &mut Errors,
    ) -> ToolFn {
        let params = sig
            .inputs
            .iter_mut()
            .filter_map(|input| match input {
                FnArg::Typed(pt) => params::classify(pt, errors),
                FnArg::Receiver(_) => None,
            })
            .collect();
        let docs: Vec<String> = attrs.iter().filter_map(attr::doc_line).collect();
        let description = match &attr.description {
            Some(d) => d.value.value(),
            None => attr::join_docs(&docs),
        };
        let name = match &attr.name {
            Some(n) => n.value.value(),
            None => params::unraw(&sig.ident),
        };
        let ret = match &sig.output {
            ReturnType::Default => syn::parse_quote!(()),
            ReturnType::Type(_, ty) => (**ty).clone(),
        };
        ToolFn {
            attr,
            sig: sig.clone(),
            place,
            name,
            description,
            params,
            ret,
        }
    }

    pub(crate) fn ident(&self) -> &Ident {
        &self.sig.ident
    }

    pub(crate) fn is_async(&self) -> bool {
        self.sig.asyncness.is_some()
    }
}

/// An `impl` block under `#[tools]`.
pub(crate) struct ToolsBlock {
    pub attr: ToolsAttr,
    /// The block as it is emitted again (`#[tool]` attributes removed).
    pub item: ItemImpl,
    /// The `#[tool]` methods, in order.
    pub tools: Vec<ToolFn>,
}

impl ToolsBlock {
    pub(crate) fn read(attr: TokenStream, mut item: ItemImpl, errors: &mut Errors) -> ToolsBlock {
        let attr = ToolsAttr::parse(attr, errors);
        let mut tools = Vec::new();
        for entry in item.items.iter_mut() {
            let ImplItem::Fn(method) = entry else {
                continue;
            };
            // `#[tool]`, or a path to it (`#[at::tool]`): `#[tools]` runs first and takes it
            // off, so however the user reached the attribute, it means this.
            let is_tool =
                |a: &syn::Attribute| a.path().segments.last().is_some_and(|s| s.ident == "tool");
            let Some(pos) = method.attrs.iter().position(is_tool) else {
                continue;
            };
            let tool_attr = method.attrs.remove(pos);
            let tokens = match tool_attr.meta {
                Meta::Path(_) => TokenStream::new(),
                Meta::List(list) => list.tokens,
                Meta::NameValue(nv) => {
                    errors.at(&nv, "write `#[tool]` or `#[tool(option, ...)]`");
                    TokenStream::new()
                }
            };
            let options = ToolAttr::parse(tokens, errors);
            tools.push(ToolFn::read(
                options,
                &method.attrs,
                &mut method.sig,
                Place::Method,
                errors,
            ));
        }
        ToolsBlock { attr, item, tools }
    }

    pub(crate) fn self_ty(&self) -> &Type {
        &self.item.self_ty
    }

    /// The last segment of the type's name (`Counter` for `crate::Counter`), for the names
    /// of the generated structs.
    pub(crate) fn type_name(&self) -> String {
        match self.self_ty() {
            Type::Path(p) => p
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default(),
            _ => String::new(),
        }
    }
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
