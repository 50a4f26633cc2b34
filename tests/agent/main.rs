//! Integration tests of the ReAct agent with the scripted model: full runs, the event stream,
//! memory, budgets and limits, per-turn tool snapshots, agent-managed groups, approval,
//! return-directly tools, background results, and external (client-side) tools.

mod approval;
mod background;
mod external;
mod groups;
mod info;
mod runs;
mod tools;
