//! Argument extraction codegen: the body of `AgentTool::call` up to the invocation, binding
//! every parameter to a local of its own name.
//!
//! JSON parameters first take the one-pass path — a generated sink with one `Option` per
//! parameter, filled by the runtime's `parse` — and fall back to the thorough path (`resolve`
//! plus one statement per parameter) only when the arguments are irregular, so the model
//! still hears about every problem. Context parameters are extracted afterwards.
//!
//! Invariant: the happy path allocates nothing and dispatches nothing dynamically beyond the
//! parsing itself; indices are signature positions, the same as in the spec; every use of a
//! parameter's type goes through one runtime trait per kind (`VisibleParam`, `PresetParam`)
//! and is spanned at the type, so a missing `Deserialize` / `JsonSchema` is one error there.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::ToolFn;
use crate::params::{Kind, Param};

pub(super) fn arguments(tool: &ToolFn) -> TokenStream {
    let json: Vec<(usize, &Param)> = tool
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_json())
        .collect();
    let ctx: Vec<(usize, &Param)> = tool
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_json())
        .collect();
    let ctx = context(&ctx);
    if json.is_empty() {
        return quote! {
            if !__at::parse(&__args, &mut __at::NoArgs) {
                if let __at::Err(e) = __at::resolve(&mut __args) {
                    return __at::ready_err(e);
                }
            }
            #ctx
        };
    }
    let sink = sink(&json);
    let fast = fast(&json);
    let thorough = thorough(&json);
    let ids = json.iter().map(|(_, p)| &p.ident);
    quote! {
        #sink
        #fast
        let (#(#ids,)*) = match __fast {
            __at::Option::Some(values) => values,
            __at::Option::None => { #thorough }
        };
        #ctx
    }
}

fn field((index, _): &(usize, &Param)) -> syn::Ident {
    format_ident!("__p{}", index)
}

/// The runtime trait through which a JSON parameter's type is used.
fn param_trait(p: &Param) -> TokenStream {
    match p.kind {
        Kind::Preset => quote!(__at::PresetParam),
        _ => quote!(__at::VisibleParam),
    }
}

/// The sink type: an `Option` per JSON parameter, filled by index.
fn sink(json: &[(usize, &Param)]) -> TokenStream {
    let fields: Vec<_> = json.iter().map(field).collect();
    let indices: Vec<usize> = json.iter().map(|(i, _)| *i).collect();
    let types = json.iter().map(|(_, p)| &p.ty);
    let accepts = json.iter().zip(&fields).map(|((i, p), f)| {
        let (ty, tr) = (&p.ty, param_trait(p));
        quote_spanned!(ty.span()=> #i => self.#f = <#ty as #tr>::next(map)?,)
    });
    let binds = json.iter().zip(&fields).map(|((i, p), f)| {
        let (ty, tr) = (&p.ty, param_trait(p));
        quote_spanned!(ty.span()=> #i => {
            self.#f = <#ty as #tr>::parse(json);
            self.#f.is_some()
        },)
    });
    quote! {
        #[derive(Default)]
        struct __Sink { #(#fields: __at::Option<#types>,)* }
        impl __at::Sink for __Sink {
            fn accept<'de, A: __at::MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> __at::Result<(), A::Error> {
                match index {
                    #(#accepts)*
                    _ => { map.next_value::<__at::IgnoredAny>()?; }
                }
                __at::Ok(())
            }
            fn present(&self, index: usize) -> bool {
                match index {
                    #(#indices => self.#fields.is_some(),)*
                    _ => false,
                }
            }
            fn bind(&mut self, index: usize, json: &str) -> bool {
                match index {
                    #(#binds)*
                    _ => false,
                }
            }
        }
    }
}

/// The one-pass path: `__fast` is `Some(values)` when every required value is there.
fn fast(json: &[(usize, &Param)]) -> TokenStream {
    let fields: Vec<_> = json.iter().map(field).collect();
    let patterns = json.iter().map(|(_, p)| {
        let id = &p.ident;
        match p.kind {
            Kind::Required | Kind::Preset => quote!(__at::Option::Some(#id)),
            _ => quote!(#id),
        }
    });
    let values = json.iter().map(|(_, p)| {
        let (id, ty) = (&p.ident, &p.ty);
        match &p.kind {
            Kind::Optional => quote!(__at::Option::flatten(#id)),
            Kind::Defaulted(expr) => quote!(__at::Option::<#ty>::unwrap_or_else(#id, || #expr)),
            _ => quote!(#id),
        }
    });
    // The user's default expression may be a plain constructor; clippy must not ask them to
    // rewrite code they never wrote.
    quote! {
        let mut __sink = __Sink::default();
        #[allow(clippy::redundant_closure, clippy::unwrap_or_default, unreachable_patterns)]
        let __fast = if __at::parse(&__args, &mut __sink) {
            match (#(__sink.#fields,)*) {
                (#(#patterns,)*) => __at::Option::Some((#(#values,)*)),
                _ => __at::Option::None,
            }
        } else {
            __at::Option::None
        };
    }
}

/// The thorough path: resolve, read every parameter, report every problem at once.
fn thorough(json: &[(usize, &Param)]) -> TokenStream {
    let reads = json.iter().map(|(index, p)| {
        let (ident, ty) = (&p.ident, &p.ty);
        match &p.kind {
            Kind::Required => quote_spanned!(ty.span()=>
                let #ident = __errors.take(<#ty as __at::VisibleParam>::required(&__args, #index));
            ),
            Kind::Preset => quote_spanned!(ty.span()=>
                let #ident = __errors.take(<#ty as __at::PresetParam>::required(&__args, #index));
            ),
            Kind::Optional => quote_spanned!(ty.span()=>
                let #ident: __at::Option<#ty> = __errors
                    .take(<#ty as __at::VisibleParam>::value(&__args, #index))
                    .map(__at::Option::flatten);
            ),
            Kind::Defaulted(expr) => quote_spanned!(ty.span()=>
                #[allow(clippy::redundant_closure, clippy::unwrap_or_default)]
                let #ident: __at::Option<#ty> = __errors
                    .take(<#ty as __at::VisibleParam>::value(&__args, #index))
                    .map(|__v| __v.unwrap_or_else(|| #expr));
            ),
            Kind::Context => quote!(),
        }
    });
    let ids: Vec<_> = json.iter().map(|(_, p)| &p.ident).collect();
    quote! {
        if let __at::Err(e) = __at::resolve(&mut __args) {
            return __at::ready_err(e);
        }
        let mut __errors = __at::ArgErrors::default();
        #(#reads)*
        let (#(__at::Option::Some(#ids),)*) = (#(#ids,)*) else {
            return __errors.fail(&__args);
        };
        (#(#ids,)*)
    }
}

/// `#[ctx]` parameters, from the context by type; every missing one is reported.
fn context(ctx: &[(usize, &Param)]) -> TokenStream {
    if ctx.is_empty() {
        return quote!();
    }
    let reads = ctx.iter().map(|(index, p)| {
        let (ident, ty) = (&p.ident, &p.ty);
        quote_spanned!(ty.span()=>
            let #ident = __errors.take(__at::context::<#ty>(&__args, #index));
        )
    });
    let ids: Vec<_> = ctx.iter().map(|(_, p)| &p.ident).collect();
    quote! {
        let mut __errors = __at::ArgErrors::default();
        #(#reads)*
        let (#(__at::Option::Some(#ids),)*) = (#(#ids,)*) else {
            return __errors.fail(&__args);
        };
    }
}
