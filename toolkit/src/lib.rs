#![doc = include_str!("../../README.md")]
#![deny(missing_docs)]

pub mod args;
pub mod context;
pub mod definition;
pub mod error;
pub mod schema;
pub mod tool;
pub mod toolkit;

pub use agent_toolkit_macros::{tool, tools};
pub use args::{ArgPolicy, HiddenArgs, ToolArgs, TypeMismatch, UnknownArgs};
pub use context::{
    CallInfo, CancellationToken, ContextLayer, ContextRejection, Ctx, FromToolContext,
    ProgressEvent, ToolContext, ToolEmitter, ToolProgress,
};
pub use definition::{ToolAnnotations, ToolDefinition};
pub use error::{BuildError, ConfigError, IntoToolError, ToolError, ToolErrorKind};
pub use schema::{Dialect, NameMap};
pub use tool::{
    AgentTool, Content, IntoToolOutput, Json, ParamKind, ParamSpec, ToolCall, ToolFuture,
    ToolOptions, ToolOutput, ToolResult, ToolSpec,
};
pub use toolkit::{GroupInfo, IntoTools, ToolSet, Toolkit, ToolkitBuilder};

/// Re-exported so users need not depend on schemars/serde versions of their own to derive
/// parameter types (`#[derive(JsonSchema)]` still needs `schemars` in scope).
pub use schemars;
pub use serde_json;

/// Everything a tool author needs: `use agent_toolkit::prelude::*;`.
pub mod prelude {
    pub use crate::{
        AgentTool, CallInfo, CancellationToken, Ctx, Dialect, FromToolContext, HiddenArgs, Json,
        ToolCall, ToolContext, ToolDefinition, ToolEmitter, ToolError, ToolOutput, ToolResult,
        Toolkit, tool, tools,
    };
}

/// Items the macros expand to. Not public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use crate::args::{ArgErrors, ToolArgs};
    pub use crate::context::FromToolContext;
    pub use crate::error::ToolError;
    pub use crate::schema::{param_schema, schema_generator};
    pub use crate::tool::{
        AgentTool, IntoToolOutput, ParamKind, ParamSpec, ToolFuture, ToolOptions, ToolSpec,
    };
    pub use crate::toolkit::{IntoTools, ToolSet};
    pub use schemars::{JsonSchema, SchemaGenerator};
    pub use serde::de::DeserializeOwned;
    pub use serde_json::Value;
    pub use std::borrow::Cow;
    pub use std::boxed::Box;
    pub use std::option::Option;
    pub use std::result::Result::{self, Err, Ok};
    pub use std::string::ToString;
    pub use std::sync::Arc;
    pub use std::time::Duration;
    pub use std::vec::Vec;

    /// A ready future carrying an error, for argument failures found before the tool runs.
    pub fn ready_err(error: ToolError) -> ToolFuture {
        Box::pin(std::future::ready(Err(error)))
    }

    /// Type check for `.preset` / `.default_arg` values, run at build time.
    pub fn check_json<T: DeserializeOwned>(text: &str) -> Result<(), crate::args::TypeMismatch> {
        crate::args::deserialize::<T>(text).map(drop)
    }

    /// Compile-time assertions emitted per parameter, so an error lands on that parameter's type.
    pub fn assert_visible_param<T: DeserializeOwned + JsonSchema>() {}
    /// See [`assert_visible_param`].
    pub fn assert_preset_param<T: DeserializeOwned>() {}
    /// See [`assert_visible_param`].
    pub fn assert_ctx_param<T: FromToolContext>() {}
    /// See [`assert_visible_param`].
    pub fn assert_output<T: IntoToolOutput>() {}
}
