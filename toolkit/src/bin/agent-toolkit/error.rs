//! [`CliError`]: a failure, and the exit code it gives.

/// A failure, sorted by what the person at the shell has to do about it.
#[derive(Debug)]
pub enum CliError {
    /// The tool ran and failed (exit 1).
    Tool(String),
    /// The command line was wrong (exit 2).
    Usage(String),
    /// The server could not be reached or broke the protocol (exit 3).
    Server(String),
}

impl CliError {
    /// The process exit code: 1 for a tool error, 2 for a usage mistake, 3 for a server.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Tool(_) => 1,
            CliError::Usage(_) => 2,
            CliError::Server(_) => 3,
        }
    }

    /// What went wrong, for stderr.
    pub fn message(&self) -> &str {
        match self {
            CliError::Tool(m) | CliError::Usage(m) | CliError::Server(m) => m,
        }
    }
}
