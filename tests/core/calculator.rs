//! The hand-written `CalculatorTool` of seeds/002, as the document writes it: `AgentTool`
//! implemented by hand, the input schema given as JSON, the arguments read straight from the
//! JSON with fallbacks. Nothing in the tool checks them; the toolkit must.

use agent_toolkit::prelude::*;
use agent_toolkit::tool::{ToolArgs, ToolFuture, ToolSpec};
use serde_json::{Value, json};

pub struct CalculatorTool;

impl AgentTool for CalculatorTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("calculator", "Perform arithmetic operations").with_input_schema(json!({
            "type": "object",
            "properties": {
                "a": {"type": "number"},
                "b": {"type": "number"},
                "operation": {"type": "string", "enum": ["add", "sub", "mul", "div"]}
            },
            "required": ["a", "b", "operation"]
        }))
    }

    fn call(&self, args: ToolArgs) -> ToolFuture {
        let params: Value = serde_json::from_str(args.raw()).unwrap_or_default();
        let a = params["a"].as_f64().unwrap_or(0.0);
        let b = params["b"].as_f64().unwrap_or(0.0);
        let op = params["operation"].as_str().unwrap_or("add");

        let result = match op {
            "add" => Ok(a + b),
            "sub" => Ok(a - b),
            "mul" => Ok(a * b),
            "div" if b != 0.0 => Ok(a / b),
            "div" => Err(ToolError::execution("Division by zero")),
            _ => Err(ToolError::execution("Unknown operation")),
        };
        Box::pin(async move { result.map(|r| ToolOutput::text(r.to_string())) })
    }
}
