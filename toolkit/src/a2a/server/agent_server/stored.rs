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
pub(super) mod durable {
    use std::borrow::Cow;

    use serde::{Deserialize, Serialize};

    use super::{Session, Shared};
    use crate::a2a::parts::{CallFormat, ToolResultEntry};
    use crate::agent::PausedRun;
    use crate::model::Message;
    use crate::storage::stored::{self, Stored};

    /// A conversation as stored, in the versioned form of everything stored
    /// ([`crate::storage::stored`]). Version 0 is the form written before it had a version.
    #[derive(Serialize, Deserialize)]
    pub(super) struct Record<'a> {
        pub(super) memory: Cow<'a, [Message]>,
        #[serde(default)]
        pub(super) waiting: Option<Cow<'a, PausedRun>>,
        #[serde(default)]
        announced_by: Option<Cow<'a, str>>,
        #[serde(default)]
        received: Cow<'a, [ToolResultEntry]>,
        /// `openai` or `langchain`.
        format: Cow<'a, str>,
    }

    impl Stored for Record<'_> {
        const WHAT: &'static str = "an A2A conversation";
        const VERSION: u32 = 2;
        const READS: std::ops::RangeInclusive<u32> = 0..=2;
        const UNVERSIONED: Option<u32> = Some(0);

        /// Versions 0 and 1 kept the memory in the form before the closed set of message
        /// kinds, and a waiting run of its version 1.
        fn upgrade(
            _version: u32,
            fields: &mut serde_json::Map<String, serde_json::Value>,
        ) -> Result<(), String> {
            if let Some(memory) = fields.get_mut("memory") {
                crate::model::message::upgrade_v1(memory).map_err(|e| format!("`memory`: {e}"))?;
            }
            if let Some(waiting) = fields.get_mut("waiting") {
                stored::upgrade_nested::<PausedRun>(waiting)
                    .map_err(|e| format!("`waiting`: {e}"))?;
            }
            Ok(())
        }
    }

    /// A stored conversation read back, its version checked first.
    pub(super) fn record_of(value: serde_json::Value) -> Result<Record<'static>, String> {
        stored::decode_value(value).map_err(|e| e.to_string())
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
            let stored = record_of(value)
                .map_err(|e| format!("the stored conversation {context_id}: {e}"))?;
            session.agent.restore_conversation(
                stored.memory.into_owned(),
                stored.waiting.map(Cow::into_owned),
            );
            session.announced_by = stored.announced_by.map(Cow::into_owned);
            session.received = stored.received.into_owned();
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
            let stored = stored::encode_value(&Record {
                memory: Cow::Borrowed(memory),
                waiting: waiting.map(Cow::Borrowed),
                announced_by: session.announced_by.as_deref().map(Cow::Borrowed),
                received: Cow::Borrowed(&session.received),
                format: Cow::Borrowed(session.format.as_str()),
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

#[cfg(all(test, durable))]
mod tests {
    use serde_json::json;

    use super::durable::record_of;

    /// A conversation stored before the versioned form (no version) is read as version 0; one
    /// of a version this build does not know is refused naming it.
    #[test]
    fn conversations_of_the_previous_form_are_read() {
        let old = json!({"memory": [{"role": "user", "content": "hi"}], "format": "openai"});
        let record = record_of(old).unwrap();
        assert_eq!(&*record.memory, [crate::model::Message::user("hi")]);
        let error = record_of(json!({"version": 7, "memory": [], "format": "openai"}))
            .err()
            .unwrap();
        assert!(
            error.contains("an A2A conversation in format version 7"),
            "{error}"
        );
    }

    /// A conversation of version 1 (messages with a `role`, a waiting run of its version 1) is
    /// upgraded as it is read: the memory into today's kinds, the waiting run too.
    #[test]
    fn a_version_1_conversation_with_a_waiting_run_is_upgraded() {
        use crate::model::Message;
        let call = json!({"id": "c1", "name": "open_door", "arguments": "{}"});
        let memory = json!([
            {"role": "user", "content": "Open it."},
            {"role": "assistant", "content": "", "tool_calls": [call]},
        ]);
        let v1 = json!({
            "version": 1,
            "memory": memory,
            "waiting": {
                "version": 1, "run_id": "r", "next_iteration": 2, "run_start": 0,
                "argument_errors": {}, "usage": {"input_tokens": 0, "output_tokens": 0},
                "messages": memory, "approvals": [], "external_calls": [call],
                "external_results": [{"role": "tool", "content": "open", "tool_call_id": "c1"}],
                "external_tools": []
            },
            "format": "openai"
        });
        let record = record_of(v1).unwrap();
        assert!(matches!(record.memory[1], Message::Assistant(_)));
        let waiting = record.waiting.expect("the waiting run").into_owned();
        assert_eq!(waiting.messages(), &*record.memory);
        let written = serde_json::to_value(&waiting).unwrap();
        assert_eq!(
            written["version"],
            json!(crate::agent::PausedRun::FORMAT_VERSION)
        );
        assert_eq!(
            written["external_results"][0],
            json!({"call_id": "c1", "name": "", "content": "open"})
        );
    }
}
