//! Tool search: [`ToolIndex`], a BM25 index over tool definitions, and the [`SearchHit`]s it
//! answers with.
//!
//! A toolkit with deferred tools keeps one index over every tool it can reach
//! ([`Toolkit::search_tools`](crate::Toolkit::search_tools)); an agent answers its
//! `search_tools` meta tool from it. The index is also usable on its own.
//!
//! **The method**, chosen on the development halves of two corpora and measured on their other
//! halves (BENCHMARKS.md, "Tool search"): BFCL's function definitions and questions, and 603
//! real MCP servers' tools with agent-written queries (`tests/search/mcp/`); the rules of the
//! first version are in `tests/search/METHOD.md`. Each tool has three fields: its name, its
//! description, and for each parameter (nested objects and array items included) its name,
//! its description and its `enum` values. Text becomes terms the same way in tools and
//! queries: runs of letters and digits split at camelCase boundaries (`getHTTPServer` →
//! `http`, `server`; `_`, `-` and `.` separate words), lowercased, 80 common English words
//! dropped, the rest stemmed by the Snowball English stemmer. Tools are ranked by Okapi BM25F
//! (`k1` 1.2, `b` 0.5, Lucene's idf; the parameters field weighs half) over the query's terms,
//! a word said twice counting 1.38 times (`k3` 1.2); words the catalog writes joined or apart
//! are matched against its own vocabulary ("file system" finds `filesystem`, "github" finds
//! "GitHub"); ties by name, then by the order tools were added, so a query always gives the
//! same ranking.
//!
//! Why not a crate: `tantivy` is a whole search engine (segments, a directory, a writer
//! thread) for what is here a few thousand short documents that change one at a time; the
//! `bm25` crate's tokenizer and scorer are not the ones the benchmarks chose (camelCase
//! splitting, enum values, fields, the catalog's own vocabulary for joined words). The stemmer
//! is a crate's (`rust-stemmers`); the rest is a few hundred lines with tests.
//!
//! **By meaning too** (feature `semantic`): with [`Embeddings`] — a static embedding model in
//! model2vec's layout, one vector per word piece — [`ToolIndex::with_embeddings`] also embeds
//! each tool (its name's words and its description) and each query, and mixes the top 50 by
//! cosine similarity into BM25's top 50: both scaled to 0..1 within their top, then
//! `0.7·BM25 + 0.3·meaning` ([`SearchSettings::semantic_weight`]). Tools sharing no word
//! with the query can then be found ("save my notes" → `write_file`). Chosen on the same dev
//! halves, where it gained on every source (BFCL, MCP, both in the 10,000-tool mix) and
//! lost on none; reciprocal rank fusion, tried first, lost on every source (BM25's top ranks
//! are worth more than a rank's reciprocal says). The tests' model is distilled from
//! all-MiniLM-L6-v2 (`tests/search/distill.py`); vectors are kept as bytes with a scale, and a
//! search reads all of them (10,000 tools: BENCHMARKS.md).
//!
//! Updates are incremental: [`insert`](ToolIndex::insert) and [`remove`](ToolIndex::remove)
//! touch the postings of one tool; the statistics (tool count, total length) are running sums.
//!
//! A pair of adjacent query terms found adjacent in a tool's name or description adds a
//! little (0.15 of a term), and a tool whose name's terms the query says adds up to 1.5: both
//! chosen on the benchmark's dev half, where each gained at 3,000 and at 10,000 tools.

mod index;
#[cfg(feature = "semantic")]
mod semantic;
mod text;

pub use index::{FieldWeights, SearchHit, SearchSettings, ToolIndex};
#[cfg(feature = "semantic")]
pub use semantic::{Embeddings, EmbeddingsError};
pub use text::Stemming;

use serde_json::{Value, json};

use crate::tool::ToolDefinition;

/// The name of the meta tool that searches deferred tools: an agent's `search_tools`, which
/// providers with client-side tool search also declare in their own form.
pub const SEARCH_TOOL: &str = "search_tools";

/// How many tools a search returns when the model does not say (an agent's default).
pub const DEFAULT_SEARCH_LIMIT: usize = 5;

/// The definition of the [`SEARCH_TOOL`] meta tool: a `query` in words and an optional
/// `limit`. `catalog` says in a few words what the tools not shown cover (the deferred groups),
/// and is added to the description when not empty.
pub fn search_tool_definition(catalog: &str) -> ToolDefinition {
    let mut description = String::from(
        "Search for tools you have not been shown yet. Describe what you need to do in a few \
         words; the best matching tools are listed with their names and what they do, and \
         you can call them from your next step.",
    );
    if !catalog.is_empty() {
        description.push_str(" Tools not shown yet cover: ");
        description.push_str(catalog);
    }
    ToolDefinition::new(
        SEARCH_TOOL,
        description,
        json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What you need a tool for, in words, e.g. \"weather forecast for a city\"."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 20,
                    "description": "How many tools to list (default 5)."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
}

/// The arguments of a [`SEARCH_TOOL`] call: its query and limit (`None` when not given), or
/// a message saying what is wrong with them, for the model.
pub fn parse_search_arguments(arguments: &str) -> Result<(String, Option<usize>), String> {
    let value: Value = serde_json::from_str(if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    })
    .map_err(|e| format!("the arguments of `{SEARCH_TOOL}` are not valid JSON: {e}"))?;
    // A provider's hosted search sends `{"query": .., "paths": ..}`; a bare string is a query.
    let query = match &value {
        Value::String(q) => Some(q.clone()),
        Value::Object(map) => map.get("query").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    let Some(query) = query.filter(|q| !q.trim().is_empty()) else {
        return Err(format!(
            "`{SEARCH_TOOL}` needs a `query`: what you need a tool for, in words"
        ));
    };
    let limit = match value.get("limit") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=20).contains(&n) => Some(n as usize),
            _ => {
                return Err(format!(
                    "`limit` of `{SEARCH_TOOL}` must be a whole number from 1 to 20"
                ));
            }
        },
    };
    Ok((query, limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_arguments_are_read_or_refused_with_a_reason() {
        assert_eq!(
            parse_search_arguments(r#"{"query": "weather"}"#),
            Ok(("weather".into(), None))
        );
        assert_eq!(
            parse_search_arguments(r#"{"query": "weather", "limit": 3}"#),
            Ok(("weather".into(), Some(3)))
        );
        assert_eq!(
            parse_search_arguments(r#""weather""#),
            Ok(("weather".into(), None))
        );
        for bad in [
            "",
            "{}",
            r#"{"query": " "}"#,
            r#"{"query": "x", "limit": 0}"#,
            "{oops",
        ] {
            assert!(parse_search_arguments(bad).is_err(), "{bad}");
        }
        let definition = search_tool_definition("billing (invoices)");
        assert_eq!(definition.name(), SEARCH_TOOL);
        assert!(definition.description().ends_with("billing (invoices)"));
    }
}
