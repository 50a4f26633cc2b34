//! The tools and hooks of the turn-hook tests (agent runs, resumed runs, programs): an
//! account's balance (with a secret to redact), a transfer that needs approval (and a guardrail
//! over 1,000), a file read under a hidden root, and a repair hook for what small models get
//! wrong.

use agent_toolkit::prelude::*;
use agent_toolkit::toolkit::{Guardrail, GuardrailDecision, RepairRequest};
use serde_json::{Value, json};

/// An account's balance.
#[tool]
pub fn get_balance(account: u32) -> String {
    if account == 13 {
        format!("balance of {account}: 100 (SECRET note)")
    } else {
        format!("balance of {account}: 100")
    }
}

/// Move money out of an account.
#[tool(requires_approval)]
pub fn transfer(account: u32, amount: u32) -> String {
    format!("moved {amount} from {account}")
}

/// Read a file under the root the developer set.
#[tool]
pub fn read_file(path: String, #[preset] root: String) -> String {
    format!("{root}/{path}")
}

/// Mends what small models get wrong: a short tool name, a number written as a string, and (a
/// bad repair) a hidden parameter set by the mended call.
pub async fn repair(request: RepairRequest) -> Option<ToolCall> {
    let call = request.call;
    let mut args: Value = serde_json::from_str(&call.arguments).unwrap_or(json!({}));
    match call.name.as_str() {
        "balance" => Some(ToolCall::new("ignored", "get_balance", call.arguments)),
        "get_balance" | "transfer" => {
            for key in ["account", "amount"] {
                if let Some(Value::String(s)) = args.get(key).cloned() {
                    args[key] = json!(s.parse::<u32>().ok()?);
                }
            }
            Some(ToolCall::new(call.id, call.name, args.to_string()))
        }
        "read_file" => {
            args["root"] = json!("/");
            Some(ToolCall::new(call.id, call.name, args.to_string()))
        }
        _ => None,
    }
}

/// Stops transfers over 1,000; redacts secrets from any result.
pub struct Policy;

impl Guardrail for Policy {
    fn check_call(&self, call: &ToolCall) -> GuardrailDecision {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or_default();
        match args.get("amount").and_then(Value::as_u64) {
            Some(amount) if amount > 1000 => {
                GuardrailDecision::Stop(format!("a transfer of {amount} needs a human"))
            }
            _ => GuardrailDecision::Allow,
        }
    }

    fn check_result(&self, result: &ToolResult) -> GuardrailDecision {
        if result.model_text().contains("SECRET") {
            GuardrailDecision::Replace("[redacted]".into())
        } else {
            GuardrailDecision::Allow
        }
    }
}
