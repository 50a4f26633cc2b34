//! The two expansions, start to end: parse the item, read it into the model (`ast`), check it
//! (`validate`), then either generate the tool (`item`, which uses `spec` and `extract`) or,
//! when anything was reported, emit the `fallback`.
//!
//! Invariant: code generation only ever sees a model that passed `validate`; every error of
//! one expansion is collected and emitted together.

mod extract;
mod item;
mod spec;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{FnArg, ItemFn, ItemImpl};

use crate::ast::{self, Place, ToolFn, ToolsBlock};
use crate::attr::ToolAttr;
use crate::errors::Errors;
use crate::fallback;
use crate::runtime::Runtime;
use crate::validate;

/// `#[tool]` on a free function.
pub(crate) fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new(
                Span::call_site(),
                "`#[tool]` goes on a function; for the methods of an `impl` block put `#[tools]` on the block and `#[tool]` on each method",
            )
            .to_compile_error();
            return quote!(#e #item);
        }
    };
    if let Some(FnArg::Receiver(receiver)) = func.sig.inputs.first() {
        // A method outside `#[tools]`: only the error, and the method untouched, because a
        // struct or a `const _` emitted inside an `impl` block would add errors of its own.
        let e = syn::Error::new_spanned(
            receiver,
            "`#[tool]` on a method needs `#[tools]` on its `impl` block: put `#[tools]` on the impl",
        )
        .to_compile_error();
        return quote!(#e #item);
    }
    let mut errors = Errors::default();
    let attr = ToolAttr::parse(attr, &mut errors);
    let tool = ToolFn::read(attr, &func.attrs, &mut func.sig, Place::Free, &mut errors);
    validate::tool(&tool, &mut errors);
    let runtime = Runtime::new(tool.attr.krate.as_ref().map(|k| &k.value));
    let struct_ident = format_ident!(
        "{}",
        ast::pascal_case(&tool.ident().to_string()),
        span = tool.ident().span()
    );
    if !errors.is_empty() {
        return fallback::tool_fn(errors, &func, &struct_ident, &runtime);
    }
    item::tool_fn(&func, &tool, &struct_ident, &runtime)
}

/// `#[tools]` on an `impl` block.
pub(crate) fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    let block: ItemImpl = match syn::parse2(item.clone()) {
        Ok(b) => b,
        Err(_) => {
            let e = syn::Error::new(
                Span::call_site(),
                "`#[tools]` goes on an `impl` block whose methods carry `#[tool]`",
            )
            .to_compile_error();
            return quote!(#e #item);
        }
    };
    let mut errors = Errors::default();
    let block = ToolsBlock::read(attr, block, &mut errors);
    validate::tools(&block, &mut errors);
    let runtime = Runtime::new(block.attr.krate.as_ref().map(|k| &k.value));
    if !errors.is_empty() {
        return fallback::tools_impl(errors, &block.item, &runtime);
    }
    item::tools_impl(&block, &runtime)
}
