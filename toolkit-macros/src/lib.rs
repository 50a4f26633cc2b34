//! The `#[tool]` and `#[tools]` attribute macros of `agent-toolkit`. Use them through
//! `agent_toolkit::{tool, tools}`; the documentation lives there.
//!
//! Layout, one question per module, in the order an expansion runs:
//! - `attr`: the grammar of `#[tool(..)]`, `#[tools(..)]` and the parameter attributes;
//! - `params`: what each parameter is (visible, preset, context);
//! - `ast`: the internal model of a tool function and of a `#[tools]` block;
//! - `validate`: every check that relates two or more things, in one pass;
//! - `expand`: code generation (`item` emission, `spec`, argument `extract`ion);
//! - `fallback`: what is emitted instead when there are errors;
//! - `runtime`: the versioned path generated code reaches the runtime through;
//! - `errors`: the collector that lets every problem be reported at once.
//!
//! Every problem is spanned at the offending token and says what to do, and the fallback
//! keeps one mistake from cascading into unrelated errors.

mod ast;
mod attr;
mod errors;
mod expand;
mod fallback;
mod params;
mod runtime;
mod validate;

use proc_macro::TokenStream;

/// Turn a function into an agent tool. See `agent_toolkit::tool`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(attr.into(), item.into()).into()
}

/// Turn every `#[tool]` method of an `impl` block into a tool. See `agent_toolkit::tools`.
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tools(attr.into(), item.into()).into()
}
