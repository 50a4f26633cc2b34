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

/// `impl RequestHandler for $handler`: the methods given, and every other one passed to
/// `self.inner` unchanged (the list: each method's request and answer types).
macro_rules! handler_passing_on {
    (
        impl RequestHandler for $handler:ty { $($method:item)* }
        pass on { $($name:ident($request:ty) -> $answer:ty;)* }
    ) => {
        #[async_trait]
        impl RequestHandler for $handler {
            $($method)*
            $(
                async fn $name(
                    &self,
                    params: &ServiceParams,
                    req: $request,
                ) -> Result<$answer, A2AError> {
                    self.inner.$name(params, req).await
                }
            )*
        }
    };
}

handler_passing_on! {
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
    }
    pass on {
        get_task(GetTaskRequest) -> Task;
        list_tasks(ListTasksRequest) -> ListTasksResponse;
        cancel_task(CancelTaskRequest) -> Task;
        subscribe_to_task(SubscribeToTaskRequest)
            -> BoxStream<'static, Result<StreamResponse, A2AError>>;
        create_push_config(TaskPushNotificationConfig) -> TaskPushNotificationConfig;
        get_push_config(GetTaskPushNotificationConfigRequest) -> TaskPushNotificationConfig;
        list_push_configs(ListTaskPushNotificationConfigsRequest)
            -> ListTaskPushNotificationConfigsResponse;
        delete_push_config(DeleteTaskPushNotificationConfigRequest) -> ();
        get_extended_agent_card(GetExtendedAgentCardRequest) -> AgentCard;
    }
}
