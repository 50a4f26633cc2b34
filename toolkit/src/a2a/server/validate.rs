//! Checks a `SendMessage` request before the official handler creates a task for it: the
//! message checks every server makes, then the server's own ([`SendCheck`]).
//!
//! The official handler accepts a message with no parts or no role (ProtoJSON reads both as
//! empty) and leaves content to the executor, which can only fail the task it was given. A bad
//! request should get `-32602` and no task, so [`Validated`] checks first and delegates the
//! rest unchanged.

use std::sync::Arc;

use a2a::*;
use a2a_server::{DefaultRequestHandler, RequestHandler, ServiceParams};
use async_trait::async_trait;
use futures::stream::BoxStream;

/// A server's own check of a `SendMessage` request, run before a task is created; an `Err`
/// (use [`A2AError::invalid_params`]) is the JSON-RPC error the client gets.
pub type SendCheck = Arc<dyn Fn(&SendMessageRequest) -> Result<(), A2AError> + Send + Sync>;

/// A service parameter this server sets (and removes when a client sent it) for its own
/// executors: present when the request is a `SendMessage` whose answer is the finished task
/// and nothing else watches the run as it goes — no `returnImmediately`, no push
/// notifications, not a stream. An executor may then skip the intermediate events (each one
/// the official handler stores and copies) and send the finished task once.
pub(super) const ANSWER_ONCE: &str = "x-agent-toolkit-answer-once";

/// [`DefaultRequestHandler`] behind the message checks.
pub(super) struct Validated {
    inner: DefaultRequestHandler,
    check: Option<SendCheck>,
}

impl Validated {
    pub(super) fn new(inner: DefaultRequestHandler, check: Option<SendCheck>) -> Self {
        Validated { inner, check }
    }

    fn validate(&self, req: &SendMessageRequest) -> Result<(), A2AError> {
        if req.message.parts.is_empty() {
            return Err(A2AError::invalid_params(
                "invalid params: message.parts must not be empty",
            ));
        }
        if req.message.role == Role::Unspecified {
            return Err(A2AError::invalid_params(
                "invalid params: message.role is required (ROLE_USER)",
            ));
        }
        if req.message.message_id.is_empty() {
            return Err(A2AError::invalid_params(
                "invalid params: message.messageId is required",
            ));
        }
        match &self.check {
            Some(check) => check(req),
            None => Ok(()),
        }
    }
}

#[async_trait]
impl RequestHandler for Validated {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        self.validate(&req)?;
        let config = req.configuration.as_ref();
        let once = config.is_none_or(|c| {
            c.return_immediately != Some(true) && c.task_push_notification_config.is_none()
        });
        let mut params = params.clone();
        if once {
            params.insert(ANSWER_ONCE.to_string(), Vec::new());
        } else {
            params.remove(ANSWER_ONCE);
        }
        self.inner.send_message(&params, req).await
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        self.validate(&req)?;
        if params.contains_key(ANSWER_ONCE) {
            let mut params = params.clone();
            params.remove(ANSWER_ONCE);
            return self.inner.send_streaming_message(&params, req).await;
        }
        self.inner.send_streaming_message(params, req).await
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        self.inner.get_task(params, req).await
    }

    async fn list_tasks(
        &self,
        params: &ServiceParams,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        self.inner.list_tasks(params, req).await
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        self.inner.cancel_task(params, req).await
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        self.inner.subscribe_to_task(params, req).await
    }

    async fn create_push_config(
        &self,
        params: &ServiceParams,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.inner.create_push_config(params, req).await
    }

    async fn get_push_config(
        &self,
        params: &ServiceParams,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.inner.get_push_config(params, req).await
    }

    async fn list_push_configs(
        &self,
        params: &ServiceParams,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        self.inner.list_push_configs(params, req).await
    }

    async fn delete_push_config(
        &self,
        params: &ServiceParams,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2AError> {
        self.inner.delete_push_config(params, req).await
    }

    async fn get_extended_agent_card(
        &self,
        params: &ServiceParams,
        req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2AError> {
        self.inner.get_extended_agent_card(params, req).await
    }
}
