//! Where generated code finds its runtime: `<crate>::__private_v{major}_{minor}_{patch}`.
//!
//! Invariant: generated code names nothing of the runtime crate except through the one alias
//! this module emits (`__at`), so the crate path (`::agent_toolkit`, or the user's
//! `crate = ".."`) and the module's versioned name are decided here and nowhere else. The
//! name is this crate's version, which the exact `=` pin of `agent-toolkit` on this crate
//! keeps equal to the runtime's (see `toolkit/src/private.rs` for the rule).

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Path};

const MODULE: &str = concat!(
    "__private_v",
    env!("CARGO_PKG_VERSION_MAJOR"),
    "_",
    env!("CARGO_PKG_VERSION_MINOR"),
    "_",
    env!("CARGO_PKG_VERSION_PATCH"),
);

/// The runtime module of one expansion.
pub(crate) struct Runtime {
    krate: TokenStream,
    module: Ident,
    /// The user's `crate = ".."` literal, or the macro call.
    span: Span,
}

impl Runtime {
    /// The runtime under `krate`, or under `::agent_toolkit`. A custom path is spanned at the
    /// user's literal, so a path that does not lead to the runtime is reported there.
    pub(crate) fn new(krate: Option<&Path>) -> Runtime {
        match krate {
            Some(path) => Runtime {
                krate: path.to_token_stream(),
                module: Ident::new(MODULE, path.span()),
                span: path.span(),
            },
            None => Runtime {
                krate: quote!(::agent_toolkit),
                module: Ident::new(MODULE, Span::call_site()),
                span: Span::call_site(),
            },
        }
    }

    /// `use <crate>::<module> as __at;` — the one import every generated block starts with.
    pub(crate) fn import(&self) -> TokenStream {
        let (krate, module) = (&self.krate, &self.module);
        // The whole `use` carries the span: rustc reports an unresolved import on all of it.
        quote_spanned!(self.span=> use #krate::#module as __at;)
    }
}
