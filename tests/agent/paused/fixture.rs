//! What the paused-run tests and their child process share: two tools that write what they do
//! to a log file (so a test can count runs across processes), the toolkit, and the agent,
//! built the same way in every process.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use agent_toolkit::context::{Elicitation, Elicited, Elicitor, Sampler, Sampling};
use agent_toolkit::prelude::*;
use agent_toolkit::{ChatModel, ReActAgent};

/// A file that tools append one line to per run: the record of what ran, readable by another
/// process.
pub struct Log(PathBuf);

impl Log {
    /// A new, empty log in the temp directory, unique to this process and call.
    pub fn temp(name: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "agent-toolkit-paused-{name}-{}-{n}.log",
            std::process::id()
        ));
        std::fs::write(&path, "").expect("create the log");
        Log(path)
    }

    /// The log at `path` (made by another process).
    pub fn at(path: impl AsRef<Path>) -> Self {
        Log(path.as_ref().to_path_buf())
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    fn push(&self, line: &str) {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.0)
            .expect("open the log");
        writeln!(file, "{line}").expect("write the log");
    }

    /// Every line written so far.
    pub fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.0)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// Delete a file (needs approval).
#[tool(requires_approval)]
pub async fn delete_file(path: String, #[ctx] log: Ctx<Log>, #[ctx] agent: AgentInfo) -> String {
    log.push(&format!(
        "delete_file {path} run={} step={}",
        agent.run_id, agent.iteration
    ));
    format!("deleted {path}")
}

/// Write a note (no approval needed).
#[tool]
pub async fn write_note(text: String, #[ctx] log: Ctx<Log>) -> String {
    log.push(&format!("write_note {text}"));
    format!("noted {text}")
}

/// The new name the user gives (the form `rename_file` asks with).
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct NewName {
    /// The new file name.
    pub name: String,
    /// Replace a file of that name?
    #[serde(default)]
    pub overwrite: bool,
}

/// Rename a file: asks the user for the new name (it logs each start and each rename).
#[tool]
pub async fn rename_file(
    path: String,
    #[ctx] ask: Elicitor,
    #[ctx] log: Ctx<Log>,
) -> Result<String, ToolError> {
    log.push(&format!("rename_file {path} asks"));
    match ask
        .elicit::<NewName>(format!("New name for {path}?"))
        .await?
    {
        Elicited::Accepted(new) => {
            log.push(&format!("rename_file {path} -> {}", new.name));
            Ok(format!(
                "renamed {path} to {} (overwrite: {})",
                new.name, new.overwrite
            ))
        }
        Elicited::Declined | Elicited::Cancelled => Ok(format!("kept {path}")),
    }
}

/// Archive a file with a title the caller's model writes, after the user confirms it.
#[tool]
pub async fn archive_file(
    path: String,
    #[ctx] sampler: Sampler,
    #[ctx] ask: Elicitor,
    #[ctx] log: Ctx<Log>,
) -> Result<String, ToolError> {
    log.push(&format!("archive_file {path} starts"));
    let title = sampler
        .sample(Sampling::prompt(format!("A title for {path}"), 20))
        .await?
        .text;
    let form = Elicitation::new(
        format!("Archive {path} as {title:?}?"),
        serde_json::json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
    );
    match ask.ask(form).await? {
        Elicited::Accepted(answer) if answer["ok"] == true => {
            log.push(&format!("archive_file {path} as {title}"));
            Ok(format!("archived {path} as {title}"))
        }
        _ => Ok(format!("not archived: {path}")),
    }
}

pub fn toolkit() -> Toolkit {
    Toolkit::builder()
        .register(DeleteFile)
        .register(WriteNote)
        .register(RenameFile)
        .register(ArchiveFile)
        .build()
        .expect("paused-run test toolkit")
}

/// The agent of every process: the same toolkit and settings, pausing at approvals, its tools
/// logging to `log`.
pub fn agent(model: impl ChatModel, log: Log) -> ReActAgent {
    ReActAgent::builder(model)
        .toolkit(&toolkit())
        .system_prompt("You tidy up files.")
        .context(log)
        .pause_at_approvals()
        .build()
        .expect("paused-run test agent")
}
