//! The 3-parameter tool both the dispatch and the engine benches measure, with its by-hand
//! baseline: the same work as the tool, minus the toolkit.

use agent_toolkit::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The tool's output.
#[derive(Serialize, JsonSchema)]
pub struct Sum {
    label: String,
    total: i64,
}

/// The tool's work, called directly by the baseline.
pub fn add3_direct(a: i64, b: i64, label: String) -> Sum {
    Sum {
        label,
        total: a + b,
    }
}

/// Add two numbers and label the sum.
#[tool]
pub async fn add3(a: i64, b: i64, label: String) -> Json<Sum> {
    Json(add3_direct(a, b, label))
}

/// The baseline's argument struct.
#[derive(Deserialize)]
pub struct Add3Args {
    pub a: i64,
    pub b: i64,
    pub label: String,
}

/// The arguments every dispatch measurement sends.
pub const ARGS: &str = r#"{"a": 40, "b": 2, "label": "answer"}"#;
