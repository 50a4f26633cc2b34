//! [`RemoteToolRegistry`]: tools of other A2A agents, discovered from their cards.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use tokio::sync::watch;

use super::agent::RemoteAgent;
use super::card::{RemoteToolInfo, tools_from_card};
use super::config::{AgentConfig, shared_http_client};
use super::error::A2aClientError;
use super::remote_tool::{AgentSlot, RemoteTool, base_options};
use crate::tls::TrustedRoots;
use crate::tool::AgentTool;
use crate::toolkit::{DynamicTools, IntoTools};
use crate::util;

/// Longest tool name providers accept.
const MAX_NAME: usize = 64;

/// What a refresh changed for one agent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RefreshChanges {
    /// Local names of tools that appeared.
    pub added: Vec<String>,
    /// Local names of tools that disappeared.
    pub removed: Vec<String>,
    /// Local names of tools whose description, schema or hints changed.
    pub changed: Vec<String>,
}

impl RefreshChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// The outcome of [`RemoteToolRegistry::refresh`]: per agent, what changed or why its card
/// could not be read (its tools are then kept as they were).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct RefreshReport {
    /// Agents whose card was read, with what changed.
    pub changes: Vec<(String, RefreshChanges)>,
    /// Agents whose card could not be read.
    pub errors: Vec<(String, A2aClientError)>,
}

impl RefreshReport {
    /// Whether any agent's tools changed.
    pub fn changed(&self) -> bool {
        self.changes.iter().any(|(_, c)| !c.is_empty())
    }
}

struct AgentEntry {
    alias: String,
    /// The card is re-read on refresh unless the config holds one.
    config: AgentConfig,
    slot: Arc<AgentSlot>,
    tools: Vec<RemoteTool>,
}

struct Inner {
    http: Result<reqwest::Client, A2aClientError>,
    /// The roots `http` trusts, for agents that need a client of their own.
    roots: TrustedRoots,
    agents: RwLock<Vec<AgentEntry>>,
    /// Every tool of every agent, as a set toolkits follow (kept in step under the write lock).
    dynamic: DynamicTools,
    version: watch::Sender<u64>,
    refresher: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(task) = util::lock(&self.refresher).take() {
            task.abort();
        }
    }
}

/// The tools of other A2A agents, discovered from their cards, ready to register in a local
/// [`Toolkit`](crate::Toolkit). Cheap to clone (shared); the background refresh, if started,
/// stops when the last clone is dropped.
///
/// Each agent is registered under an **alias**; its tools are named `<alias>_<tool>` locally
/// (configurable with [`AgentConfig::prefix`]), so two agents' `search` tools do not collide,
/// and names stay valid for every provider (`^[a-zA-Z0-9_-]{1,64}$`: other characters become
/// `_`, and a name too long is cut and given a hash suffix so it stays unique).
///
/// Two ways into a toolkit: [`tools`](Self::tools), registered like any tools when the toolkit
/// is built, or [`dynamic_tools`](Self::dynamic_tools), a set the toolkit follows as the
/// registry changes.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use agent_toolkit::Toolkit;
/// use agent_toolkit::a2a::client::{AgentConfig, RemoteToolRegistry};
///
/// let registry = RemoteToolRegistry::new();
/// registry.add_agent("weather", AgentConfig::new("http://127.0.0.1:41241")).await?;
/// let toolkit = Toolkit::builder()
///     .group("remote", "Tools of other agents")
///     .register(registry.tools())
///     .in_group("remote")
///     .build()?;
/// # Ok(()) }
/// ```
///
/// [`refresh`](Self::refresh) re-reads the cards (also on an interval with
/// [`refresh_every`](Self::refresh_every)). A tool that disappeared from its card fails fast in
/// toolkits that still hold it (a model-visible "no longer offered" error); a toolkit built from
/// [`tools`](Self::tools) picks up new tools when it is built again —
/// [`changes`](Self::changes) says when — while one following
/// [`dynamic_tools`](Self::dynamic_tools) sees them at once.
///
/// Agents registered with a card at hand ([`AgentConfig::card`]) keep the card they were given
/// (read it with [`parse_card`](super::parse_card) so schemas on its skills are kept). A card without the tools extension still works: schemas on its skills
/// (`input_schema`/`output_schema`) are used, and a tool with none gets the permissive input
/// schema `{"type": "object"}` (see [`tools_from_card`](super::tools_from_card)).
#[derive(Clone)]
pub struct RemoteToolRegistry {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RemoteToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteToolRegistry")
            .field("agents", &self.agents())
            .finish()
    }
}

impl Default for RemoteToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl RemoteToolRegistry {
    /// An empty registry trusting the system's roots for `https://` agents.
    pub fn new() -> Self {
        Self::with_trusted_roots(TrustedRoots::system())
    }

    /// An empty registry whose agents share one HTTP client trusting `roots` (unless an
    /// agent's config asks for [roots](AgentConfig::trusted_roots) or
    /// [headers](AgentConfig::header) of its own).
    pub fn with_trusted_roots(roots: TrustedRoots) -> Self {
        RemoteToolRegistry {
            inner: Arc::new(Inner {
                http: shared_http_client(&roots),
                roots,
                agents: RwLock::new(Vec::new()),
                dynamic: DynamicTools::new(),
                version: watch::channel(0).0,
                refresher: Mutex::new(None),
            }),
        }
    }

    /// Add the agent `config` names, known locally as `alias` (letters, digits, `_` and `-`;
    /// its tools are named `<alias>_<tool>` unless the config sets another
    /// [prefix](AgentConfig::prefix)): fetch its card, unless the config
    /// [holds one](AgentConfig::card), and add its tools. Returns their local names. Fails if
    /// the card cannot be read, the alias is taken or invalid, or a local name would collide
    /// with one already registered.
    pub async fn add_agent(
        &self,
        alias: impl Into<String>,
        config: impl Into<AgentConfig>,
    ) -> Result<Vec<String>, A2aClientError> {
        let (alias, config) = (alias.into(), config.into());
        self.check_alias(&alias)?;
        let agent = self.connect(&config).await?;
        self.insert(alias, config, agent)
    }

    /// Remove an agent and its tools. Toolkits built earlier keep the tools, which then fail
    /// with a model-visible "no longer offered" error. Returns whether the alias was known.
    pub fn remove_agent(&self, alias: &str) -> bool {
        let removed = {
            let mut agents = self.write();
            let before = agents.len();
            if let Some(entry) = agents.iter().find(|a| a.alias == alias) {
                let agent = entry.slot.agent();
                entry.slot.update(agent, HashSet::new());
            }
            agents.retain(|a| a.alias != alias);
            self.sync(&agents);
            agents.len() != before
        };
        if removed {
            self.bump();
        }
        removed
    }

    /// Re-read the card of every agent registered without one and update its tools. An agent whose card cannot
    /// be read keeps its tools; the report says which.
    pub async fn refresh(&self) -> RefreshReport {
        // Agents registered with a card keep it: there is nothing to re-read.
        let configs: Vec<(String, AgentConfig)> = self
            .read()
            .iter()
            .filter(|a| a.config.card.is_none())
            .map(|a| (a.alias.clone(), a.config.clone()))
            .collect();
        let mut report = RefreshReport::default();
        let fetched =
            futures::future::join_all(configs.iter().map(|(_, config)| self.connect(config))).await;
        for ((alias, _), result) in configs.into_iter().zip(fetched) {
            match result.and_then(|agent| self.replace(&alias, agent)) {
                Ok(changes) => report.changes.push((alias, changes)),
                Err(error) => report.errors.push((alias, error)),
            }
        }
        if report.changed() {
            self.bump();
        }
        report
    }

    /// Refresh every `interval` in the background (replacing an earlier interval). The task
    /// holds no strong reference: it stops when the registry is dropped. Fails outside a tokio
    /// runtime, which the task needs.
    pub fn refresh_every(&self, interval: Duration) -> Result<(), A2aClientError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            A2aClientError::Config(
                "refresh_every needs a tokio runtime: call it from async code".into(),
            )
        })?;
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let task = runtime.spawn(async move {
            let mut ticks = tokio::time::interval(interval.max(Duration::from_millis(1)));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                let Some(inner) = weak.upgrade() else { return };
                let report = RemoteToolRegistry { inner }.refresh().await;
                for (alias, error) in &report.errors {
                    tracing::warn!(agent = alias.as_str(), %error, "refreshing the agent card failed");
                }
            }
        });
        if let Some(old) = util::lock(&self.inner.refresher).replace(task) {
            old.abort();
        }
        Ok(())
    }

    /// Every tool of every agent, agents in registration order, tools in card order.
    pub fn tools(&self) -> RemoteTools {
        RemoteTools(
            self.read()
                .iter()
                .flat_map(|a| a.tools.iter().cloned())
                .collect(),
        )
    }

    /// The tools of one agent.
    pub fn agent_tools(&self, alias: &str) -> Option<RemoteTools> {
        self.read()
            .iter()
            .find(|a| a.alias == alias)
            .map(|a| RemoteTools(a.tools.clone()))
    }

    /// One tool by its local name.
    pub fn tool(&self, local_name: &str) -> Option<RemoteTool> {
        self.read()
            .iter()
            .flat_map(|a| a.tools.iter())
            .find(|t| t.name() == local_name)
            .cloned()
    }

    /// The connection to one agent.
    pub fn agent(&self, alias: &str) -> Option<RemoteAgent> {
        self.read()
            .iter()
            .find(|a| a.alias == alias)
            .map(|a| a.slot.agent())
    }

    /// The aliases of the registered agents.
    pub fn agents(&self) -> Vec<String> {
        self.read().iter().map(|a| a.alias.clone()).collect()
    }

    /// A counter that goes up whenever the set of tools changes (agents added or removed, a
    /// refresh that changed something): wait on it to rebuild a toolkit.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }

    async fn connect(&self, config: &AgentConfig) -> Result<RemoteAgent, A2aClientError> {
        let shared = match &self.inner.http {
            Ok(http) => Some((http, &self.inner.roots)),
            Err(e) => return Err(e.clone()),
        };
        RemoteAgent::connect_with(config, config.http_client(shared)?).await
    }

    fn check_alias(&self, alias: &str) -> Result<(), A2aClientError> {
        if alias.is_empty()
            || !alias
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(A2aClientError::Config(format!(
                "agent alias `{alias}` is invalid: use letters, digits, `_` and `-`"
            )));
        }
        if self.read().iter().any(|a| a.alias == alias) {
            return Err(A2aClientError::Config(format!(
                "an agent is already registered as `{alias}`; choose another alias"
            )));
        }
        Ok(())
    }

    fn insert(
        &self,
        alias: String,
        config: AgentConfig,
        agent: RemoteAgent,
    ) -> Result<Vec<String>, A2aClientError> {
        let infos = tools_from_card(agent.card());
        let offered = infos.iter().map(|i| i.name.clone()).collect();
        let slot = Arc::new(AgentSlot::new(alias.clone(), agent, offered));
        let tools = make_tools(&alias, &config, &slot, infos);
        let names: Vec<String> = tools.iter().map(|t| t.name().to_string()).collect();
        {
            let mut agents = self.write();
            // Checked again under the lock: another add may have raced this one.
            if agents.iter().any(|a| a.alias == alias) {
                return Err(A2aClientError::Config(format!(
                    "an agent is already registered as `{alias}`; choose another alias"
                )));
            }
            check_collisions(&agents, &alias, &tools)?;
            agents.push(AgentEntry {
                alias,
                config,
                slot,
                tools,
            });
            self.sync(&agents);
        }
        self.bump();
        Ok(names)
    }

    fn replace(&self, alias: &str, agent: RemoteAgent) -> Result<RefreshChanges, A2aClientError> {
        let mut agents = self.write();
        let Some(index) = agents.iter().position(|a| a.alias == alias) else {
            return Err(A2aClientError::Config(format!(
                "agent `{alias}` was removed during the refresh"
            )));
        };
        let entry = &agents[index];
        let infos = tools_from_card(agent.card());
        let tools = make_tools(alias, &entry.config, &entry.slot, infos.clone());
        let others: Vec<&AgentEntry> = agents.iter().filter(|a| a.alias != alias).collect();
        for tool in &tools {
            if others
                .iter()
                .flat_map(|a| a.tools.iter())
                .any(|t| t.name() == tool.name())
            {
                return Err(A2aClientError::Config(format!(
                    "agent `{alias}` now offers a tool whose local name `{}` is taken by another agent; its tools were kept as they were",
                    tool.name()
                )));
            }
        }
        let mut changes = RefreshChanges::default();
        for tool in &tools {
            match entry.tools.iter().find(|t| t.name() == tool.name()) {
                None => changes.added.push(tool.name().to_string()),
                Some(old) if old.info() != tool.info() => {
                    changes.changed.push(tool.name().to_string())
                }
                Some(_) => {}
            }
        }
        for old in &entry.tools {
            if !tools.iter().any(|t| t.name() == old.name()) {
                changes.removed.push(old.name().to_string());
            }
        }
        entry
            .slot
            .update(agent, infos.into_iter().map(|i| i.name).collect());
        agents[index].tools = tools;
        if !changes.is_empty() {
            self.sync(&agents);
        }
        Ok(changes)
    }

    /// The registry's tools as a [`DynamicTools`] set, kept in step with it: register it with
    /// [`ToolkitBuilder::dynamic`](crate::toolkit::ToolkitBuilder::dynamic) and the toolkit follows
    /// every agent added or removed and every refresh, with no rebuild.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use agent_toolkit::Toolkit;
    /// use agent_toolkit::a2a::client::{AgentConfig, RemoteToolRegistry};
    ///
    /// let registry = RemoteToolRegistry::new();
    /// let toolkit = Toolkit::builder()
    ///     .group("remote", "Tools of other agents")
    ///     .dynamic("remote", &registry.dynamic_tools())
    ///     .build()?;
    /// registry.add_agent("weather", AgentConfig::new("http://127.0.0.1:41241")).await?;
    /// registry.refresh_every(Duration::from_secs(60))?;
    /// assert!(!toolkit.definitions().is_empty());
    /// # Ok(()) }
    /// ```
    pub fn dynamic_tools(&self) -> DynamicTools {
        self.inner.dynamic.clone()
    }

    /// Put the current tools into the dynamic set. Called with the write lock held, so updates
    /// reach the set in the order they were made.
    fn sync(&self, agents: &[AgentEntry]) {
        let tools = agents
            .iter()
            .flat_map(|a| a.tools.iter().cloned())
            .map(|t| Arc::new(t) as Arc<dyn AgentTool>);
        if let Err(error) = self.inner.dynamic.replace(tools) {
            // The registry refuses colliding names before it gets here.
            tracing::error!(%error, "remote tools could not be put into the dynamic set");
        }
    }

    fn bump(&self) {
        self.inner.version.send_modify(|v| *v += 1);
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<AgentEntry>> {
        util::read(&self.inner.agents)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Vec<AgentEntry>> {
        util::write(&self.inner.agents)
    }
}

fn make_tools(
    alias: &str,
    config: &AgentConfig,
    slot: &Arc<AgentSlot>,
    infos: Vec<RemoteToolInfo>,
) -> Vec<RemoteTool> {
    let prefix = match &config.prefix {
        Some(prefix) => prefix.clone(),
        None => format!("{alias}_"),
    };
    infos
        .into_iter()
        .map(|info| {
            let local = local_name(&prefix, &info.name);
            RemoteTool::new(
                local,
                info,
                slot.clone(),
                base_options(&config.groups, config.tool_timeout),
            )
        })
        .collect()
}

/// `prefix + name`, made valid for providers: `[a-zA-Z0-9_-]`, 1 to 64 characters. A name
/// that had to be cut keeps a hash of the whole name, so two long names stay distinct.
fn local_name(prefix: &str, name: &str) -> String {
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

fn check_collisions(
    agents: &[AgentEntry],
    alias: &str,
    tools: &[RemoteTool],
) -> Result<(), A2aClientError> {
    let mut seen = HashSet::new();
    for tool in tools {
        if !seen.insert(tool.name()) {
            return Err(A2aClientError::Config(format!(
                "agent `{alias}` offers two tools named `{}` once sanitised; give it another prefix",
                tool.name()
            )));
        }
        if let Some(other) = agents
            .iter()
            .find(|a| a.tools.iter().any(|t| t.name() == tool.name()))
        {
            return Err(A2aClientError::Config(format!(
                "tool `{}` of agent `{alias}` collides with the tool of the same local name from agent `{}`; give one of them another prefix (AgentConfig::prefix)",
                tool.name(),
                other.alias
            )));
        }
    }
    Ok(())
}

/// A set of remote tools, registrable at once: `ToolkitBuilder::register(registry.tools())`.
/// A slice of [`RemoteTool`]s otherwise (`Deref`), and iterable.
#[derive(Clone, Debug, Default)]
pub struct RemoteTools(Vec<RemoteTool>);

impl IntoTools for RemoteTools {
    fn into_tools(self) -> Vec<Arc<dyn AgentTool>> {
        self.0
            .into_iter()
            .map(|t| Arc::new(t) as Arc<dyn AgentTool>)
            .collect()
    }
}

impl std::ops::Deref for RemoteTools {
    type Target = [RemoteTool];
    fn deref(&self) -> &[RemoteTool] {
        &self.0
    }
}

impl IntoIterator for RemoteTools {
    type Item = RemoteTool;
    type IntoIter = std::vec::IntoIter<RemoteTool>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
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
