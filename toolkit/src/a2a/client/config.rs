//! [`AgentConfig`]: how to reach and name one agent, and [`local_name`]: how its tools are
//! named locally.

use std::hash::{Hash, Hasher};
use std::time::Duration;

use super::agent::WireVersion;

/// Longest tool name providers accept.
const MAX_NAME: usize = 64;

/// How to reach and name one agent.
#[derive(Clone)]
pub struct AgentConfig {
    pub(super) alias: String,
    pub(super) url: String,
    pub(super) bearer: Option<String>,
    pub(super) prefix: Option<String>,
    pub(super) groups: Vec<String>,
    pub(super) timeout: Option<Duration>,
    pub(super) prefer: WireVersion,
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("alias", &self.alias)
            .field("url", &self.url)
            .field("bearer", &self.bearer.as_ref().map(|_| "(redacted)"))
            .field("prefix", &self.local_prefix())
            .field("groups", &self.groups)
            .finish()
    }
}

impl AgentConfig {
    /// The agent at `url` (its base URL, where `/.well-known/agent-card.json` is served),
    /// known locally as `alias` (letters, digits, `_` and `-`).
    pub fn new(alias: impl Into<String>, url: impl Into<String>) -> Self {
        AgentConfig {
            alias: alias.into(),
            url: url.into(),
            bearer: None,
            prefix: None,
            groups: Vec::new(),
            timeout: None,
            prefer: WireVersion::V1,
        }
    }

    /// Speak `version` to this agent when its card offers it (default: 1.x when offered, else
    /// 0.3).
    pub fn prefer_version(mut self, version: WireVersion) -> Self {
        self.prefer = version;
        self
    }

    /// Authenticate to this agent with `Authorization: Bearer <token>`.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// Prefix of the local tool names (default: `<alias>_`). An empty prefix keeps the
    /// remote names as they are; the toolkit then refuses two tools of the same name.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Put every tool of this agent into `group` (declare it on the toolkit builder).
    pub fn group(mut self, group: impl Into<String>) -> Self {
        self.groups.push(group.into());
        self
    }

    /// Per-attempt timeout of this agent's tools (the toolkit's timeout applies otherwise).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The alias.
    pub fn alias(&self) -> &str {
        &self.alias
    }

    /// The agent's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The prefix of the local tool names: the one set, or `<alias>_`.
    pub(super) fn local_prefix(&self) -> String {
        match &self.prefix {
            Some(p) => p.clone(),
            None => format!("{}_", self.alias),
        }
    }
}

/// `prefix + name`, made valid for providers: `[a-zA-Z0-9_-]`, 1 to 64 characters. A name
/// that had to be cut keeps a hash of the whole name, so two long names stay distinct.
pub fn local_name(prefix: &str, name: &str) -> String {
    let full = format!("{prefix}{name}");
    let mut clean: String = full
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        clean.push('_');
    }
    if clean.len() > MAX_NAME {
        let mut hasher = rustc_hash::FxHasher::default();
        full.hash(&mut hasher);
        let suffix = format!("_{:08x}", hasher.finish() as u32);
        clean.truncate(MAX_NAME - suffix.len());
        clean.push_str(&suffix);
    }
    clean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_names_are_valid_and_distinct() {
        assert_eq!(local_name("a_", "search"), "a_search");
        assert_eq!(local_name("", "web.search v2"), "web_search_v2");
        let long_a = local_name("agent_", &"x".repeat(80));
        let long_b = local_name("agent_", &format!("{}y", "x".repeat(79)));
        assert_eq!(long_a.len(), 64);
        assert_ne!(long_a, long_b);
        assert!(
            long_a
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
    }
}
