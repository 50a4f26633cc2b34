//! Integration tests of the ReAct agent with the scripted model: full runs, the event stream,
//! memory, budgets and limits, per-turn tool snapshots, agent-managed groups, approval,
//! return-directly tools, background results (also with reused call ids), external
//! (client-side) tools, the agent info tools receive, runs paused and resumed by a new agent
//! (in this process and in another), and argument checks of hand-written tools (with the
//! `validate` feature).

mod approval;
mod background;
#[path = "../support/bank.rs"]
mod bank;
mod external;
mod failed;
mod groups;
#[cfg(feature = "validate")]
mod hand_written;
mod hooks;
mod info;
mod limits;
mod loop_guard;
mod meta;
mod paused;
mod runs;
mod search;
#[path = "../support/seen.rs"]
mod seen;
mod tools;

/// The hand-written tool of seeds/002, shared with the core tests.
#[cfg(feature = "validate")]
#[path = "../core/calculator.rs"]
mod calculator;
