//! Client-side tools over A2A: the client owns the tools, the agent owns the model.
//!
//! Shows the whole loop of client-side tools on loopback, offline: an `A2aAgentServer` (a `ReActAgent`
//! on a `ScriptedModel`, in this process) receives a question plus the client's tool
//! definitions in a data part; it answers with the tool calls its model wants, the task in
//! `INPUT_REQUIRED`; `ClientToolsSession` runs them locally through the client's own `Toolkit`
//! (in parallel, with its timeouts and retries), sends the results back on the same task, and
//! gets the answer as the task's artifact. A follow-up question continues the same
//! conversation (`contextId`).
//!
//! Run it with `cargo run --example a2a_client_tools --features a2a`.

use std::sync::Arc;
use std::time::Duration;

use agent_toolkit::a2a::client::{ClientToolsSession, RemoteAgent, TranscriptEntry};
use agent_toolkit::a2a::server::{A2aAgentServer, ServerOptions};
use agent_toolkit::prelude::*;
use agent_toolkit::{
    ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use serde_json::json;

/// Current weather of a city (runs on the client).
#[tool(read_only)]
fn get_weather(
    /// City name.
    city: String,
) -> String {
    format!("18°C and sunny in {city}")
}

/// Local time in a city (runs on the client).
#[tool(read_only)]
fn local_time(
    /// City name.
    city: String,
) -> String {
    format!("it is 14:05 in {city}")
}

/// The agent's model, scripted so the example runs offline: two tool calls at once, then an
/// answer, then an answer to the follow-up.
fn scripted_model() -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new([
        ScriptedTurn::calls([
            ("get_weather", json!({"city": "Paris"})),
            ("local_time", json!({"city": "Paris"})),
        ]),
        ScriptedTurn::text("In Paris it is 14:05, 18°C and sunny: a good time for a walk."),
        ScriptedTurn::text("You're welcome!"),
    ]))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The agent, served on a free loopback port; one agent per conversation.
    let model = scripted_model();
    let server = A2aAgentServer::new(move |_context_id| {
        ReActAgent::builder(model.clone())
            .system_prompt("Answer with the client's tools.")
            .build()
    })
    .options(ServerOptions::new().name("Scripted travel agent"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(server.serve(listener));
    println!("agent server (scripted model, offline) at {url}");

    // The client: its own tools, and a session with the agent.
    let toolkit = Toolkit::builder()
        .register(GetWeather)
        .register(LocalTime)
        .timeout(Duration::from_secs(5))
        .build()?;
    let agent = RemoteAgent::connect(&url).await?;
    let mut session = ClientToolsSession::new(agent, toolkit).max_rounds(4);

    let reply = session
        .send("Is it a good time for a walk in Paris?")
        .await?;
    for entry in &reply.transcript {
        match entry {
            TranscriptEntry::User(text) => println!("user:   {text}"),
            TranscriptEntry::ToolCalls(calls) => {
                for call in calls {
                    println!(
                        "agent asks the client to run {}({})",
                        call.name, call.arguments
                    );
                }
            }
            TranscriptEntry::ToolResults(results) => {
                for result in results {
                    println!("client returns {} -> {}", result.name, result.content);
                }
            }
            TranscriptEntry::Answer(answer) => println!("agent:  {answer}"),
        }
    }
    println!(
        "({} round of tool calls, task {})",
        reply.rounds, reply.task_id
    );

    let follow_up = session.send("Thanks!").await?;
    println!("user:   Thanks!\nagent:  {}", follow_up.answer);
    println!(
        "same conversation: {}",
        follow_up.context_id == reply.context_id
    );
    Ok(())
}
