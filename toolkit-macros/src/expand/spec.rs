//! `ToolSpec` generation: the body of `AgentTool::spec`.
//!
//! Invariant: the spec declares the parameters in signature order (the indices `extract`
//! uses), each with the schema and build-time check of its kind, and is built only through
//! the runtime's `spec` constructor and its plain `Param` / `Options` structs. Each use of a
//! parameter's or the return type's traits is spanned at that type, so a type that does not
//! qualify is reported there.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use crate::ast::ToolFn;
use crate::attr::Flag;
use crate::params::{Kind, Param};

pub(super) fn spec_fn(tool: &ToolFn) -> TokenStream {
    let (name, description) = (&tool.name, &tool.description);
    let params = tool.params.iter().map(param);
    let ret = &tool.ret;
    let output_schema = quote_spanned!(ret.span()=> <#ret as __at::IntoToolOutput>::output_schema(&mut __generator));
    let options = options(tool);
    quote! {
        fn spec(&self) -> __at::ToolSpec {
            let mut __generator = __at::generator();
            let __params = [#(#params),*];
            let __output_schema = #output_schema;
            __at::spec(#name, #description, __params, __generator, __output_schema, #options)
        }
    }
}

fn param(p: &Param) -> TokenStream {
    let ty = &p.ty;
    let span = ty.span();
    let wire = &p.wire_name;
    let rust_type = type_string(ty);
    let description = match &p.description {
        Some(d) => quote!(__at::Option::Some(#d)),
        None => quote!(__at::Option::None),
    };
    let reads = match &p.kind {
        Kind::Context => {
            quote_spanned!(span=> {
                #[allow(unused_imports)]
                use __at::{ReadsNothing as _, ReadsViaExtractor as _};
                (&__at::ReadsOf::<#ty>::NEW).reads()
            })
        }
        _ => quote!(__at::Option::None),
    };
    let (kind, schema, check) = match &p.kind {
        Kind::Required | Kind::Optional | Kind::Defaulted(_) => (
            match p.kind {
                Kind::Required => quote!(Required),
                Kind::Optional => quote!(Optional),
                _ => quote!(Defaulted),
            },
            quote_spanned!(span=> <#ty as __at::VisibleParam>::schema(&mut __generator)),
            quote_spanned!(span=> __at::Option::Some(<#ty as __at::VisibleParam>::check)),
        ),
        Kind::Preset => (
            quote!(Preset),
            quote!(__at::Value::Null),
            quote_spanned!(span=> __at::Option::Some(<#ty as __at::PresetParam>::check)),
        ),
        Kind::Context => (
            quote!(Context),
            quote!(__at::Value::Null),
            quote!(__at::Option::None),
        ),
    };
    quote! {
        __at::Param {
            name: #wire,
            kind: __at::ParamKind::#kind,
            description: #description,
            schema: #schema,
            rust_type: #rust_type,
            check: #check,
            reads: #reads,
        }
    }
}

fn options(tool: &ToolFn) -> TokenStream {
    let a = &tool.attr;
    let groups = &a.groups;
    let read_only = a.is(Flag::ReadOnly);
    let idempotent = a.is(Flag::Idempotent);
    let destructive = a.is(Flag::Destructive);
    let sequential = a.is(Flag::Sequential);
    let background = a.is(Flag::Background);
    let requires_approval = a.is(Flag::RequiresApproval);
    let defer_loading = a.is(Flag::DeferLoading);
    let timeout_ms = match &a.timeout_ms {
        Some(t) => {
            let ms = t.value;
            quote!(__at::Option::Some(#ms))
        }
        None => quote!(__at::Option::None),
    };
    let retries = match &a.retries {
        Some(r) => {
            let n = r.value;
            quote!(__at::Option::Some(#n))
        }
        None => quote!(__at::Option::None),
    };
    let max_output_bytes = match &a.max_output_bytes {
        Some(b) => {
            let n = b.value as usize;
            quote!(__at::Option::Some(#n))
        }
        None => quote!(__at::Option::None),
    };
    let blocking = !tool.is_async();
    quote! {
        __at::Options {
            groups: &[#(#groups),*],
            read_only: #read_only,
            idempotent: #idempotent,
            destructive: #destructive,
            sequential: #sequential,
            background: #background,
            requires_approval: #requires_approval,
            defer_loading: #defer_loading,
            timeout_ms: #timeout_ms,
            retries: #retries,
            max_output_bytes: #max_output_bytes,
            blocking: #blocking,
        }
    }
}

/// A readable type name for error messages: `Ctx<UserContext>`, not `Ctx < UserContext >`.
fn type_string(ty: &Type) -> String {
    let raw = quote!(#ty).to_string();
    let chars: Vec<char> = raw.chars().collect();
    let tight = |c: char| matches!(c, '<' | '>' | ':' | '&' | '(' | ')' | '[' | ']');
    let mut out = String::with_capacity(raw.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let prev = if i > 0 { chars[i - 1] } else { ' ' };
            let next = chars.get(i + 1).copied().unwrap_or(' ');
            if tight(prev) || tight(next) || next == ',' {
                continue;
            }
        }
        out.push(c);
    }
    out
}
