//! [`RemoteToolRegistry`]: tools of other A2A agents, discovered from their cards.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use a2a::AgentCard;
use tokio::sync::watch;

use super::agent::{RemoteAgent, RemoteAgentBuilder, default_http_client, fetch_card};
use super::card::tools_from_card;
use super::config::{AgentConfig, local_name};
use super::error::A2aClientError;
use super::remote_tool::{AgentSlot, RemoteTool, base_options};
use crate::tool::AgentTool;
use crate::toolkit::{DynamicTools, IntoTools};

/// What a refresh changed for one agent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    config: AgentConfig,
    /// The card is re-read on refresh (false: registered with an explicit card).
    discovered: bool,
    slot: Arc<AgentSlot>,
    tools: Vec<RemoteTool>,
}

struct Inner {
    http: reqwest_a2a::Client,
    agents: RwLock<Vec<AgentEntry>>,
    /// Every tool of every agent, as a set toolkits follow (kept in step under the write lock).
    dynamic: DynamicTools,
    version: watch::Sender<u64>,
    refresher: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(task) = self
            .refresher
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
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
/// registry.add_agent(AgentConfig::new("weather", "http://127.0.0.1:41241")).await?;
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
/// Explicitly registered agents ([`add_agent_card`](Self::add_agent_card)) keep the card they
/// were given (read it with [`parse_card`](super::parse_card) so schemas on its skills are
/// kept). A card without the tools extension still works: schemas on its skills
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
    /// An empty registry with a default HTTP client.
    pub fn new() -> Self {
        Self::with_http_client(default_http_client())
    }

    /// An empty registry using `http` (`reqwest` 0.13) for every agent.
    pub fn with_http_client(http: reqwest_a2a::Client) -> Self {
        RemoteToolRegistry {
            inner: Arc::new(Inner {
                http,
                agents: RwLock::new(Vec::new()),
                dynamic: DynamicTools::new(),
                version: watch::channel(0).0,
                refresher: Mutex::new(None),
            }),
        }
    }

    /// Fetch the card of the agent `config` names and add its tools. Returns their local
    /// names. Fails if the card cannot be read, the alias is taken or invalid, or a local name
    /// would collide with one already registered.
    pub async fn add_agent(&self, config: AgentConfig) -> Result<Vec<String>, A2aClientError> {
        self.check_alias(&config.alias)?;
        let agent = self.connect(&config).await?;
        self.insert(config, agent, true)
    }

    /// Add an agent from a card already at hand (explicit registration: no card fetch now or on
    /// refresh). Returns the local names of its tools.
    pub fn add_agent_card(
        &self,
        config: AgentConfig,
        card: AgentCard,
    ) -> Result<Vec<String>, A2aClientError> {
        self.check_alias(&config.alias)?;
        let agent = self.builder(&config).with_card(card)?;
        self.insert(config, agent, false)
    }

    /// Remove an agent and its tools. Toolkits built earlier keep the tools, which then fail
    /// with a model-visible "no longer offered" error. Returns whether the alias was known.
    pub fn remove_agent(&self, alias: &str) -> bool {
        let removed = {
            let mut agents = self.write();
            let before = agents.len();
            if let Some(entry) = agents.iter().find(|a| a.config.alias == alias) {
                let agent = entry.slot.agent();
                entry.slot.update(agent, HashSet::new());
            }
            agents.retain(|a| a.config.alias != alias);
            self.sync(&agents);
            agents.len() != before
        };
        if removed {
            self.bump();
        }
        removed
    }

    /// Re-read every discovered agent's card and update its tools. An agent whose card cannot
    /// be read keeps its tools; the report says which.
    pub async fn refresh(&self) -> RefreshReport {
        let configs: Vec<AgentConfig> = self
            .read()
            .iter()
            .filter(|a| a.discovered)
            .map(|a| a.config.clone())
            .collect();
        let mut report = RefreshReport::default();
        let fetched =
            futures::future::join_all(configs.iter().map(|config| self.connect(config))).await;
        for (config, result) in configs.into_iter().zip(fetched) {
            match result.and_then(|agent| self.replace(&config.alias, agent)) {
                Ok(changes) => report.changes.push((config.alias, changes)),
                Err(error) => report.errors.push((config.alias, error)),
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
        let mut slot = self
            .inner
            .refresher
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(old) = slot.replace(task) {
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
            .find(|a| a.config.alias == alias)
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
            .find(|a| a.config.alias == alias)
            .map(|a| a.slot.agent())
    }

    /// The aliases of the registered agents.
    pub fn agents(&self) -> Vec<String> {
        self.read().iter().map(|a| a.config.alias.clone()).collect()
    }

    /// A counter that goes up whenever the set of tools changes (agents added or removed, a
    /// refresh that changed something): wait on it to rebuild a toolkit.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }

    fn builder(&self, config: &AgentConfig) -> RemoteAgentBuilder {
        let mut builder = RemoteAgent::builder(config.url.clone())
            .http_client(self.inner.http.clone())
            .prefer_version(config.prefer);
        if let Some(token) = &config.bearer {
            builder = builder.bearer_token(token.clone());
        }
        builder
    }

    async fn connect(&self, config: &AgentConfig) -> Result<RemoteAgent, A2aClientError> {
        let card = fetch_card(&self.inner.http, &config.url, config.bearer.as_deref()).await?;
        self.builder(config).with_card(card)
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
        if self.read().iter().any(|a| a.config.alias == alias) {
            return Err(A2aClientError::Config(format!(
                "an agent is already registered as `{alias}`; choose another alias"
            )));
        }
        Ok(())
    }

    fn insert(
        &self,
        config: AgentConfig,
        agent: RemoteAgent,
        discovered: bool,
    ) -> Result<Vec<String>, A2aClientError> {
        let infos = tools_from_card(agent.card());
        let offered = infos.iter().map(|i| i.name.clone()).collect();
        let slot = Arc::new(AgentSlot::new(config.alias.clone(), agent, offered));
        let tools = make_tools(&config, &slot, infos);
        let names: Vec<String> = tools.iter().map(|t| t.name().to_string()).collect();
        {
            let mut agents = self.write();
            // Checked again under the lock: another add may have raced this one.
            if agents.iter().any(|a| a.config.alias == config.alias) {
                return Err(A2aClientError::Config(format!(
                    "an agent is already registered as `{}`; choose another alias",
                    config.alias
                )));
            }
            check_collisions(&agents, &config.alias, &tools)?;
            agents.push(AgentEntry {
                config,
                discovered,
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
        let Some(index) = agents.iter().position(|a| a.config.alias == alias) else {
            return Err(A2aClientError::Config(format!(
                "agent `{alias}` was removed during the refresh"
            )));
        };
        let entry = &agents[index];
        let infos = tools_from_card(agent.card());
        let tools = make_tools(&entry.config, &entry.slot, infos.clone());
        let others: Vec<&AgentEntry> = agents.iter().filter(|a| a.config.alias != alias).collect();
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
    /// registry.add_agent(AgentConfig::new("weather", "http://127.0.0.1:41241")).await?;
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
        self.inner.agents.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Vec<AgentEntry>> {
        self.inner.agents.write().unwrap_or_else(|e| e.into_inner())
    }
}

fn make_tools(
    config: &AgentConfig,
    slot: &Arc<AgentSlot>,
    infos: Vec<super::card::RemoteToolInfo>,
) -> Vec<RemoteTool> {
    let prefix = config.local_prefix();
    infos
        .into_iter()
        .map(|info| {
            let local = local_name(&prefix, &info.name);
            RemoteTool::new(
                local,
                info,
                slot.clone(),
                base_options(&config.groups, config.timeout),
            )
        })
        .collect()
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
                other.config.alias
            )));
        }
    }
    Ok(())
}

/// A set of remote tools, registrable at once: `ToolkitBuilder::register(registry.tools())`.
#[derive(Clone, Debug, Default)]
pub struct RemoteTools(pub Vec<RemoteTool>);

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
