//! The MCP client of a session as the [`Caller`] of the calls it makes: a tool's
//! [`Elicitor`](crate::context::Elicitor) question becomes `elicitation/create`, its
//! [`Sampler`](crate::context::Sampler) request `sampling/createMessage`, both sent to the client
//! while the call runs. Sampling belongs to the 2025-11-25 era (rmcp marks it deprecated:
//! SEP-2577 drops it later), hence the `allow(deprecated)` here.
#![allow(deprecated)]

use futures::future::BoxFuture;
use rmcp::RoleServer;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitationAction, ElicitationSchema, Role,
    SamplingMessage,
};
use rmcp::service::Peer;
use serde_json::Value;

use crate::context::{AskError, Caller, Elicitation, Elicited, Sampled, Sampling};

/// Asks the MCP client of one request.
pub(super) struct McpCaller {
    pub(super) peer: Peer<RoleServer>,
    /// The revision of the request when it is a stateless one (2026-07-28), in which a server
    /// sends the client no requests during a call.
    pub(super) stateless_revision: Option<String>,
}

impl McpCaller {
    /// `Err` unless the client declared `capability` in `initialize`, in the handshake era.
    fn require(&self, capability: &'static str, declared: bool) -> Result<(), AskError> {
        if let Some(revision) = &self.stateless_revision {
            return Err(AskError::Unsupported {
                capability,
                detail: format!(
                    "the MCP client speaks revision {revision}, in which a server cannot send the client requests during a call; a client that connects with the 2025-11-25 `initialize` handshake can be asked"
                ),
            });
        }
        if declared {
            return Ok(());
        }
        let client = self
            .peer
            .peer_info()
            .map(|info| format!("`{}`", info.client_info.name))
            .unwrap_or_else(|| "the client".into());
        Err(AskError::Unsupported {
            capability,
            detail: format!(
                "the MCP client {client} did not declare the `{capability}` capability, so it cannot be asked"
            ),
        })
    }

    fn capabilities(&self) -> Option<rmcp::model::ClientCapabilities> {
        self.peer.peer_info().map(|info| info.capabilities.clone())
    }
}

impl Caller for McpCaller {
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<Elicited<Value>, AskError>> {
        Box::pin(async move {
            let declared = self.capabilities().is_some_and(|c| c.elicitation.is_some());
            self.require("elicitation", declared)?;
            let schema: ElicitationSchema =
                serde_json::from_value(request.schema).map_err(|e| AskError::Failed {
                    what: "elicitation",
                    message: format!(
                        "the form is not one MCP elicitation allows (an object of primitive properties): {e}"
                    ),
                })?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: request.message,
                requested_schema: schema,
            };
            let answer =
                self.peer
                    .create_elicitation(params)
                    .await
                    .map_err(|e| AskError::Failed {
                        what: "elicitation",
                        message: e.to_string(),
                    })?;
            Ok(match answer.action {
                ElicitationAction::Accept => {
                    Elicited::Accepted(answer.content.unwrap_or(Value::Object(Default::default())))
                }
                ElicitationAction::Decline => Elicited::Declined,
                // Cancel, and any action a later revision adds: nothing was decided.
                _ => Elicited::Cancelled,
            })
        })
    }

    fn sample(&self, request: Sampling) -> BoxFuture<'_, Result<Sampled, AskError>> {
        Box::pin(async move {
            let declared = self.capabilities().is_some_and(|c| c.sampling.is_some());
            self.require("sampling", declared)?;
            let messages = request
                .messages
                .into_iter()
                .map(|(role, text)| {
                    let role = if role == "assistant" {
                        Role::Assistant
                    } else {
                        Role::User
                    };
                    SamplingMessage::new(role, rmcp::model::SamplingMessageContentBlock::text(text))
                })
                .collect();
            let mut params = CreateMessageRequestParams::new(messages, request.max_tokens);
            if let Some(system) = request.system_prompt {
                params = params.with_system_prompt(system);
            }
            let answer = self
                .peer
                .create_message(params)
                .await
                .map_err(|e| AskError::Failed {
                    what: "sampling",
                    message: e.to_string(),
                })?;
            let text = answer
                .message
                .content
                .iter()
                .filter_map(|block| block.as_text().map(|t| t.text.clone()))
                .collect::<Vec<_>>()
                .join("\n");
            let mut sampled = Sampled::new(text, answer.model);
            sampled.stop_reason = answer.stop_reason;
            Ok(sampled)
        })
    }
}
