use std::any::Any;

use crate::error::{ToolError, ToolErrorKind};

/// The text of a panic payload, for the operator.
pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".into())
}

/// The error for a panicked tool: a short message for the model, the panic text for the
/// operator.
pub(crate) fn panicked(tool: &str, payload: Box<dyn Any + Send>) -> ToolError {
    ToolError::new(
        ToolErrorKind::Panicked,
        format!("tool `{tool}` failed unexpectedly"),
    )
    .with_detail(format!(
        "tool `{tool}` panicked: {}",
        panic_message(payload)
    ))
}
