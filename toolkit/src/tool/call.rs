//! [`ToolCall`]: one call the model asked for.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One call the model asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Id chosen by the model (or provider); echoed in the result. Shared, because the result,
    /// the tool's [`CallInfo`](crate::CallInfo) and progress events all carry it.
    pub id: Arc<str>,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text, exactly as the model produced them (possibly malformed).
    pub arguments: String,
}

impl ToolCall {
    /// A call with arguments given as JSON text.
    pub fn new(
        id: impl Into<Arc<str>>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// A call with arguments given as a JSON value.
    pub fn json(id: impl Into<Arc<str>>, name: impl Into<String>, arguments: Value) -> Self {
        Self::new(id, name, arguments.to_string())
    }
}
