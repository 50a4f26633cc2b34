//! The second tool-search corpus: real MCP servers' tools, listed from the servers themselves
//! (`tests/search/mcp/collect.py`, pinned in `servers.json`), and queries written the way agents
//! write them, each labelled with the tool (or tools, one set per need) that answers it
//! (`queries.json`; how both were made: `tests/search/mcp/README.md`). Kept in the repository:
//! the tests need no set-up.
//!
//! A tool is indexed as an imported one is named (`server__tool`, what
//! `McpImport::connect(target, server)` registers), under the key `server/tool`.

use std::path::PathBuf;

use agent_toolkit::ToolDefinition;
use agent_toolkit::search::{SearchSettings, ToolIndex};
use serde::Deserialize;
use serde_json::Value;

use super::corpus;

/// One tool as listed by its server.
#[derive(Clone, Deserialize)]
pub struct McpTool {
    pub server: String,
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

impl McpTool {
    /// The key it is indexed under.
    pub fn key(&self) -> String {
        format!("{}/{}", self.server, self.name)
    }

    /// The definition a toolkit importing its server with the server's name as prefix holds.
    pub fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            format!("{}__{}", self.server, self.name),
            self.description.clone(),
            self.parameters.clone(),
        )
    }
}

/// One query: what it asks, and for each thing it needs, the tools (keys) that answer it.
#[derive(Clone, Deserialize)]
pub struct McpQuery {
    pub id: String,
    pub text: String,
    pub needs: Vec<Vec<String>>,
}

pub struct McpCorpus {
    pub tools: Vec<McpTool>,
    pub queries: Vec<McpQuery>,
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/search/mcp")
}

/// The corpus, as kept in `tests/search/mcp/`. Every label names a tool of the catalog.
pub fn load() -> McpCorpus {
    let read = |file: &str| {
        let path = dir().join(file);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let tools: Vec<McpTool> = serde_json::from_slice(&read("tools.json")).expect("tools.json");
    let queries: Vec<McpQuery> =
        serde_json::from_slice(&read("queries.json")).expect("queries.json");
    let keys: std::collections::HashSet<String> = tools.iter().map(McpTool::key).collect();
    assert_eq!(keys.len(), tools.len(), "one tool per server and name");
    for q in &queries {
        assert!(!q.needs.is_empty(), "{}: no need", q.id);
        for key in q.needs.iter().flatten() {
            assert!(
                keys.contains(key),
                "{}: `{key}` is not in the catalog",
                q.id
            );
        }
    }
    McpCorpus { tools, queries }
}

/// Whether a query is in the development half (the same rule as BFCL's: the first byte of
/// the sha256 of its id is even).
pub fn is_dev(query: &McpQuery) -> bool {
    corpus::is_dev(&corpus::Query {
        id: query.id.clone(),
        text: String::new(),
        relevant: Vec::new(),
    })
}

/// The catalog as BFCL-corpus tools (for the distractors of the mix).
pub fn as_corpus_tools(tools: &[McpTool]) -> Vec<corpus::Tool> {
    tools
        .iter()
        .map(|t| corpus::Tool {
            name: t.definition().name().to_string(),
            description: t.description.clone(),
            parameters: t.parameters.clone(),
        })
        .collect()
}

/// Add the catalog to `index`, each tool under its key.
pub fn insert(index: &mut ToolIndex, tools: &[McpTool]) {
    for t in tools {
        index.insert_as(&t.key(), &t.definition());
    }
}

/// An index of the catalog alone.
pub fn index_with(tools: &[McpTool], settings: SearchSettings) -> ToolIndex {
    let mut index = ToolIndex::with_settings(settings);
    insert(&mut index, tools);
    index
}

/// Recall at 1, 5 and 10 (a tool of any need ranked that high), MRR over the top 10, and for
/// queries of several needs the share whose every need has a tool in the top 5.
#[derive(Clone, Copy, Debug, Default)]
pub struct McpFigures {
    pub queries: usize,
    pub r1: f64,
    pub r5: f64,
    pub r10: f64,
    pub mrr: f64,
    pub multi: usize,
    pub all_needs5: f64,
}

pub fn evaluate(index: &ToolIndex, queries: &[&McpQuery]) -> McpFigures {
    let mut f = McpFigures {
        queries: queries.len(),
        ..McpFigures::default()
    };
    for q in queries {
        let hits = index.search(&q.text, 10);
        let relevant = |key: &str| q.needs.iter().flatten().any(|k| k == key);
        if let Some(rank) = hits.iter().position(|h| relevant(&h.key)).map(|p| p + 1) {
            f.r1 += f64::from(u8::from(rank <= 1));
            f.r5 += f64::from(u8::from(rank <= 5));
            f.r10 += 1.0;
            f.mrr += 1.0 / rank as f64;
        }
        if q.needs.len() > 1 {
            f.multi += 1;
            let top: Vec<&str> = hits.iter().take(5).map(|h| h.key.as_str()).collect();
            let covered = q
                .needs
                .iter()
                .all(|need| need.iter().any(|k| top.contains(&k.as_str())));
            f.all_needs5 += f64::from(u8::from(covered));
        }
    }
    let n = queries.len().max(1) as f64;
    f.r1 /= n;
    f.r5 /= n;
    f.r10 /= n;
    f.mrr /= n;
    f.all_needs5 /= f.multi.max(1) as f64;
    f
}
