//! A2A 0.3 ↔ 1.0: the `kind`-tagged JSON of A2A 0.3 to and from the official `a2a-lf` 1.0 types.
//!
//! The official Rust crates speak A2A 1.0 only, so peers still on 0.3 (the `a2a-sdk==0.3.x`
//! Python SDK, older agents) go through these functions at the transport boundary: the server
//! converts a 0.3 request into the 1.0 request its handler takes and the 1.0 answer back into
//! 0.3 JSON, and a client does the reverse. Each function converts one protocol object:
//!
//! | object | 1.0 → 0.3 | 0.3 → 1.0 |
//! |---|---|---|
//! | [`Part`](a2a::Part) | [`part_to_v03`](objects::part_to_v03) | [`part_from_v03`](objects::part_from_v03) |
//! | [`Message`](a2a::Message) | [`message_to_v03`](objects::message_to_v03) | [`message_from_v03`](objects::message_from_v03) |
//! | [`TaskState`](a2a::TaskState) | [`state_to_v03`](objects::state_to_v03) | [`state_from_v03`](objects::state_from_v03) |
//! | [`TaskStatus`](a2a::TaskStatus) | [`status_to_v03`](objects::status_to_v03) | [`status_from_v03`](objects::status_from_v03) |
//! | [`Artifact`](a2a::Artifact) | [`artifact_to_v03`](objects::artifact_to_v03) | read inside [`artifact_update_from_v03`](events::artifact_update_from_v03) |
//! | [`Task`](a2a::Task) | [`task_to_v03`](objects::task_to_v03) | [`task_from_v03`](objects::task_from_v03) |
//! | [`TaskStatusUpdateEvent`](a2a::TaskStatusUpdateEvent) | [`status_update_to_v03`](events::status_update_to_v03) (adds `final`) | [`status_update_from_v03`](events::status_update_from_v03) |
//! | [`TaskArtifactUpdateEvent`](a2a::TaskArtifactUpdateEvent) | [`artifact_update_to_v03`](events::artifact_update_to_v03) | [`artifact_update_from_v03`](events::artifact_update_from_v03) |
//! | [`SendMessageRequest`](a2a::SendMessageRequest) (0.3 `MessageSendParams`) | [`send_params_to_v03`](params::send_params_to_v03) | [`send_params_from_v03`](params::send_params_from_v03) |
//! | [`SendMessageResponse`](a2a::SendMessageResponse) | [`send_response_to_v03`](events::send_response_to_v03) | [`send_response_from_v03`](events::send_response_from_v03) |
//! | [`StreamResponse`](a2a::StreamResponse) | [`stream_response_to_v03`](events::stream_response_to_v03) | [`stream_response_from_v03`](events::stream_response_from_v03) |
//! | [`GetTaskRequest`](a2a::GetTaskRequest) (0.3 `TaskQueryParams`) | [`get_task_params_to_v03`](params::get_task_params_to_v03) | [`get_task_params_from_v03`](params::get_task_params_from_v03) |
//! | [`CancelTaskRequest`](a2a::CancelTaskRequest) (0.3 `TaskIdParams`) | [`cancel_params_to_v03`](params::cancel_params_to_v03) | [`cancel_params_from_v03`](params::cancel_params_from_v03) |
//! | [`SubscribeToTaskRequest`](a2a::SubscribeToTaskRequest) (0.3 `TaskIdParams`) | [`subscribe_params_to_v03`](params::subscribe_params_to_v03) | [`subscribe_params_from_v03`](params::subscribe_params_from_v03) |
//! | [`AgentCard`](a2a::AgentCard) | [`card_to_v03`](card::card_to_v03) (the merged 1.0 + 0.3 card) | [`card_from_v03`](card::card_from_v03) |
//! | JSON-RPC method names | [`method_to_v03`](params::method_to_v03) | [`method_from_v03`](params::method_from_v03) |
//!
//! The differences handled (A2A spec, "what's new in v1"; `reference/protocols.md` §1.5):
//! parts carry `kind` (`text`, `data`, `file` with `file.{uri|bytes, mimeType, name}`) where 1.0
//! tells them apart by member (`text`, `data`, `url`, `raw`, with `mediaType`, `filename`); 0.3
//! data must be a JSON object, so other values are wrapped as `{"result": v}`; roles and states
//! are lowercase (`"user"`, `"input-required"`) where 1.0 has `ROLE_USER` and
//! `TASK_STATE_INPUT_REQUIRED`; objects carry `kind` where 1.0 wraps them (`{"task": …}`); a
//! status update carries `final` where 1.0 closes the stream; `configuration.blocking` is the
//! inverse of `returnImmediately`; and the card names one `url` + `preferredTransport` +
//! `protocolVersion` where 1.0 lists `supportedInterfaces`.
//!
//! Crate-private: our servers and [`RemoteAgent`](crate::a2a::client::RemoteAgent) convert at
//! their boundaries, so users only ever see the 1.0 types. Inside, `json` holds [`CompatError`](json::CompatError)
//! and the member-copying helpers, `objects` the objects both generations share (parts to
//! tasks), and `events`, `params` and `card` the rest; each depends only on those before it.
//!
//! Reading is lenient where it costs nothing (a missing `kind` is inferred from the members
//! present, `protocolVersion: "0.3.0"` is read as `"0.3"`) and strict where a guess could be
//! wrong (an unknown role, state or part kind is an error naming the path).

mod card;
mod events;
mod json;
mod objects;
mod params;

pub(crate) use card::{V03, card_from_v03, card_to_v03};
pub(crate) use events::{
    send_response_from_v03, send_response_to_v03, stream_response_from_v03, stream_response_to_v03,
};
pub(crate) use objects::{task_from_v03, task_to_v03};
pub(crate) use params::{
    cancel_params_from_v03, cancel_params_to_v03, get_task_params_from_v03, get_task_params_to_v03,
    method_from_v03, send_params_from_v03, send_params_to_v03, subscribe_params_from_v03,
};

#[cfg(test)]
mod tests;
