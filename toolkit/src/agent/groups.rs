//! The `reset_equipped_tools` meta tool: lets the model choose which of its agent-managed
//! groups are switched on. It only ever touches the agent's own view, and only the groups the
//! developer handed to the agent.

use serde::Deserialize;
use serde_json::json;

use super::ReActAgent;
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::ToolDefinition;
use crate::tool::{ToolCall, ToolOutput, ToolResult};

/// The meta tool's name.
pub(super) const META_TOOL: &str = "reset_equipped_tools";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    groups: Vec<String>,
}

impl ReActAgent {
    /// The meta tool's definition, listing the managed groups and what they are for.
    pub(super) fn meta_tool(&self) -> Option<ToolDefinition> {
        if self.managed_groups.is_empty() {
            return None;
        }
        let names: Vec<&str> = self
            .managed_groups
            .iter()
            .map(|g| g.name.as_str())
            .collect();
        let listing: String = self
            .managed_groups
            .iter()
            .map(|g| {
                let on = self.toolkit.is_group_active(&g.name).unwrap_or(false);
                format!(
                    "\n- {} ({}): {}",
                    g.name,
                    if on { "equipped" } else { "not equipped" },
                    g.description
                )
            })
            .collect();
        Some(ToolDefinition::new(
            META_TOOL,
            format!(
                "Choose which tool groups you have equipped. The groups you name are switched on and the others listed here off; the change applies from your next step. Groups:{listing}"
            ),
            json!({
                "type": "object",
                "properties": {
                    "groups": {
                        "type": "array",
                        "items": {"type": "string", "enum": names},
                        "description": "Every group to have equipped (an empty list unequips all)."
                    }
                },
                "required": ["groups"],
                "additionalProperties": false
            }),
        ))
    }

    /// Run one call of the meta tool.
    pub(super) fn reset_equipped_tools(&self, call: &ToolCall) -> ToolResult {
        let outcome = self.apply_groups(&call.arguments);
        ToolResult::new(call.id.clone(), call.name.clone(), outcome, 1)
    }

    fn apply_groups(&self, arguments: &str) -> Result<ToolOutput, ToolError> {
        let args: Args = serde_json::from_str(if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        })
        .map_err(|e| {
            ToolError::invalid_arguments(format!("invalid arguments for tool `{META_TOOL}`: {e}"))
        })?;
        let unknown: Vec<&str> = args
            .groups
            .iter()
            .filter(|g| !self.managed_groups.iter().any(|m| &m.name == *g))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            let allowed: Vec<&str> = self
                .managed_groups
                .iter()
                .map(|g| g.name.as_str())
                .collect();
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "you cannot equip {}; the groups you manage are: {}",
                    unknown.join(", "),
                    allowed.join(", ")
                ),
            ));
        }
        for group in &self.managed_groups {
            let on = args.groups.contains(&group.name);
            self.toolkit
                .set_group_active(&group.name, on)
                .map_err(|e| ToolError::execution("could not switch the group").with_source(e))?;
        }
        let tools: Vec<String> = self
            .toolkit
            .snapshot()
            .iter()
            .map(|d| d.name().to_string())
            .collect();
        Ok(ToolOutput::text(format!(
            "Equipped groups: {}. Tools available from your next step: {}. Go on with the task: \
             call the tool it needs.",
            if args.groups.is_empty() {
                "none".to_string()
            } else {
                args.groups.join(", ")
            },
            tools.join(", ")
        )))
    }
}
