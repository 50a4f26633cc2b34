//! Conversations kept in the server's durable task store
//! ([`ServerOptions::task_store`](crate::a2a::server::ServerOptions::task_store)), so a new
//! server on the same database (a restart, another replica) continues them.
//!
//! The database is the conversation's record: each turn reads it before it starts (another
//! server may have continued the conversation meanwhile) and writes it when it ends, as does a
//! cancel that closes the calls a task waited for. What is stored is what the agent cannot
//! make again: its memory, the run waiting for tool results (a [`PausedRun`]), which task
//! announced the calls, the results received so far, and the client's call format. The agent
//! itself (model, toolkit, settings) is made by the server's factory, as for a new
//! conversation. Without a durable store these are no-ops.

use super::conversations::{Session, Shared};

#[cfg(durable)]
mod durable {
    use serde::{Deserialize, Serialize};

    use super::{Session, Shared};
    use crate::a2a::parts::{CallFormat, ToolResultEntry};
    use crate::agent::PausedRun;
    use crate::model::Message;

    /// A conversation as stored.
    #[derive(Serialize, Deserialize)]
    struct Stored {
        memory: Vec<Message>,
        #[serde(default)]
        waiting: Option<PausedRun>,
        #[serde(default)]
        announced_by: Option<String>,
        #[serde(default)]
        received: Vec<ToolResultEntry>,
        /// `openai` or `langchain`.
        format: String,
    }

    impl Shared {
        /// Puts the stored state of `context_id` into `session`; an error text (for the
        /// task's failure) when the database cannot be read or holds something unreadable.
        pub(in super::super) async fn restore(
            &self,
            context_id: &str,
            session: &mut Session,
        ) -> Result<(), String> {
            let Some(store) = &self.store else {
                return Ok(());
            };
            let Some(value) = store
                .load_conversation(context_id)
                .await
                .map_err(|e| format!("the conversation could not be read: {}", e.message))?
            else {
                return Ok(());
            };
            let stored: Stored = serde_json::from_value(value)
                .map_err(|e| format!("the stored conversation {context_id} cannot be read: {e}"))?;
            session
                .agent
                .restore_conversation(stored.memory, stored.waiting);
            session.announced_by = stored.announced_by;
            session.received = stored.received;
            session.format = if stored.format == CallFormat::LangChain.as_str() {
                CallFormat::LangChain
            } else {
                CallFormat::OpenAi
            };
            Ok(())
        }

        /// Stores `session` as the state of `context_id`. A failure is logged: the turn has
        /// answered already, and the next turn reads the last state stored.
        pub(in super::super) async fn save(&self, context_id: &str, session: &Session) {
            let Some(store) = &self.store else {
                return;
            };
            let (memory, waiting) = session.agent.conversation();
            let stored = serde_json::json!({
                "memory": memory,
                "waiting": waiting,
                "announced_by": session.announced_by,
                "received": session.received,
                "format": session.format.as_str(),
            });
            if let Err(error) = store.save_conversation(context_id, &stored).await {
                tracing::warn!(
                    context_id,
                    error = %error.message,
                    "the conversation could not be stored"
                );
            }
        }
    }
}

#[cfg(not(durable))]
impl Shared {
    /// Conversations live in memory only: nothing to read.
    pub(super) async fn restore(&self, _: &str, _: &mut Session) -> Result<(), String> {
        Ok(())
    }

    /// Conversations live in memory only: nothing to write.
    pub(super) async fn save(&self, _: &str, _: &Session) {}
}
