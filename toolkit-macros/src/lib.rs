//! The `#[tool]` and `#[tools]` attribute macros of `agent-toolkit`. Use them through
//! `agent_toolkit::{tool, tools}`; the documentation lives there.
//!
//! Layout, one question per module:
//! - `options`: the grammar of `#[tool(...)]` (which options exist, their values);
//! - `params`: what each parameter is (visible, preset, context) and its attributes;
//! - `model`: a whole tool function checked and turned into the internal model;
//! - `expand`: code generation, for free functions and `#[tools]` impl blocks.
//!
//! Every problem is collected and reported at once, each spanned at the offending token, and
//! the item is still emitted so one mistake does not cascade into unrelated errors.

mod errors;
mod expand;
mod model;
mod options;
mod params;

use proc_macro::TokenStream;

/// Turn a function into an agent tool. See `agent_toolkit::tool`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool_fn(attr.into(), item.into()).into()
}

/// Turn every `#[tool]` method of an `impl` block into a tool. See `agent_toolkit::tools`.
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tools_impl(attr.into(), item.into()).into()
}
