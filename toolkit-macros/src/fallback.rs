//! What is emitted when a macro found errors: the errors, and everything the real expansion
//! would have made visible to the rest of the crate, with bodies that are never reached.
//!
//! Invariant: one mistake in a tool produces exactly the errors the macro reported — the
//! function stays callable, `#[tool]`'s struct still exists and implements `AgentTool`, and a
//! `#[tools]` type still implements `ToolSet` and `IntoTools` — so calls of the function,
//! uses of the struct and `Toolkit::builder().register(..)` add no errors of their own.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, ItemFn};

use crate::errors::Errors;
use crate::runtime::Runtime;

/// `#[tool]` on a function that has errors.
pub(crate) fn tool_fn(
    errors: Errors,
    func: &ItemFn,
    struct_ident: &Ident,
    runtime: &Runtime,
) -> TokenStream {
    let errors = errors.into_compile_errors();
    let vis = &func.vis;
    let import = runtime.import();
    quote! {
        #errors
        #func
        #[allow(missing_docs, dead_code)]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #struct_ident;
        const _: () = {
            #import
            impl __at::AgentTool for #struct_ident {
                fn spec(&self) -> __at::ToolSpec {
                    ::core::unreachable!()
                }
                fn call(&self, _: __at::ToolArgs) -> __at::ToolFuture {
                    ::core::unreachable!()
                }
            }
        };
    }
}

/// `#[tools]` on a block that has errors. A generic block gets no impls: any would need
/// bounds the user has not written, and the generic block is already an error.
pub(crate) fn tools_impl(errors: Errors, block: &syn::ItemImpl, runtime: &Runtime) -> TokenStream {
    let errors = errors.into_compile_errors();
    if !block.generics.params.is_empty() {
        return quote!(#errors #block);
    }
    let self_ty = &block.self_ty;
    let import = runtime.import();
    quote! {
        #errors
        #block
        const _: () = {
            #import
            impl __at::ToolSet for #self_ty {
                fn tools(self: __at::Arc<Self>) -> __at::Vec<__at::Arc<dyn __at::AgentTool>> {
                    ::core::unreachable!()
                }
            }
            impl __at::IntoTools for #self_ty {
                fn into_tools(self) -> __at::Vec<__at::Arc<dyn __at::AgentTool>> {
                    ::core::unreachable!()
                }
            }
        };
    }
}
