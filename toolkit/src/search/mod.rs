//! Tool search: [`ToolIndex`], a BM25F index over tool definitions, and the [`SearchHit`]s it
//! answers with.
//!
//! A toolkit with deferred tools keeps one index over every tool it can reach
//! ([`Toolkit::search_tools`](crate::Toolkit::search_tools)); an agent answers its
//! `search_tools` meta tool from it. The index is also usable on its own.
//!
//! **The method.** Each tool is a document of four fields: its name (split on `_`, `-`, `.`,
//! camelCase and letter–digit boundaries), its description, its parameters' names and their
//! descriptions (nested objects and array items included). Text becomes terms the same way in
//! every field and in the query ([`text`]): words lowercased, common English words dropped,
//! plural and verb endings stripped. Documents are ranked by BM25F: per field, a term's count
//! is normalised by the field's length against its average and weighted by the field
//! ([`FieldWeights`]); the weighted sum goes through BM25's saturation (`k1`) and is
//! multiplied by the term's inverse document frequency. Ties are broken by name, so a query
//! always gives the same ranking.
//!
//! Why not a crate: `tantivy` is a whole search engine (segments, a directory, a writer thread)
//! for what is here a few thousand short documents that change one at a time, and the `bm25`
//! crate scores one text field per document while tool search needs the fields weighted
//! apart. This is a few hundred lines with tests; its quality is measured on a public
//! benchmark (BENCHMARKS.md, "Tool search").
//!
//! Updates are incremental: [`insert`](ToolIndex::insert) and [`remove`](ToolIndex::remove)
//! touch the postings of one document; statistics (document count, average field lengths)
//! are running sums.

mod text;

use rustc_hash::FxHashMap;
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

/// The fields of a tool document.
const FIELDS: usize = 4;
const NAME: usize = 0;
const DESCRIPTION: usize = 1;
const PARAM_NAMES: usize = 2;
const PARAM_DOCS: usize = 3;

/// How much a term found in each field counts, relative to the description.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct FieldWeights {
    /// The tool's name.
    pub name: f32,
    /// Its description.
    pub description: f32,
    /// Its parameters' names.
    pub parameter_names: f32,
    /// Its parameters' descriptions.
    pub parameter_docs: f32,
}

impl Default for FieldWeights {
    fn default() -> Self {
        FieldWeights {
            name: 3.0,
            description: 1.0,
            parameter_names: 1.0,
            parameter_docs: 0.5,
        }
    }
}

impl FieldWeights {
    fn get(&self, field: usize) -> f32 {
        [
            self.name,
            self.description,
            self.parameter_names,
            self.parameter_docs,
        ][field]
    }
}

/// BM25F settings; the defaults are the ones measured in BENCHMARKS.md.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct SearchSettings {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Length normalisation, 0 (none) to 1 (full), the same for every field.
    pub b: f32,
    /// Field weights.
    pub weights: FieldWeights,
}

impl Default for SearchSettings {
    fn default() -> Self {
        SearchSettings {
            k1: 1.2,
            b: 0.75,
            weights: FieldWeights::default(),
        }
    }
}

/// One tool a search found.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SearchHit {
    /// The tool's name.
    pub name: String,
    /// The first sentence of its description (at most 160 characters).
    pub summary: String,
    /// Its BM25F score (higher is better; comparable within one search only).
    pub score: f32,
}

struct Doc {
    name: String,
    summary: String,
    lengths: [u32; FIELDS],
    /// Its distinct terms (to remove its postings).
    terms: Vec<Box<str>>,
}

struct Posting {
    doc: u32,
    counts: [u16; FIELDS],
}

/// A BM25F index over tool definitions, keyed by tool name. See the [module](self) for the
/// method.
///
/// ```
/// use agent_toolkit::ToolDefinition;
/// use agent_toolkit::search::ToolIndex;
/// use serde_json::json;
///
/// let mut index = ToolIndex::new();
/// index.insert(&ToolDefinition::new("get_weather", "Current weather for a city.",
///     json!({"type": "object", "properties": {"city": {"type": "string"}}})));
/// index.insert(&ToolDefinition::new("send_email", "Send an email.", json!({"type": "object"})));
/// let hits = index.search("what's the weather in Paris", 5);
/// assert_eq!(hits[0].name, "get_weather");
/// ```
pub struct ToolIndex {
    settings: SearchSettings,
    docs: Vec<Option<Doc>>,
    free: Vec<u32>,
    by_name: FxHashMap<String, u32>,
    postings: FxHashMap<Box<str>, Vec<Posting>>,
    totals: [u64; FIELDS],
    live: u32,
}

impl Default for ToolIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.live)
            .field("terms", &self.postings.len())
            .finish()
    }
}

impl ToolIndex {
    /// An empty index with the default settings.
    pub fn new() -> Self {
        Self::with_settings(SearchSettings::default())
    }

    /// An empty index with these settings.
    pub fn with_settings(settings: SearchSettings) -> Self {
        ToolIndex {
            settings,
            docs: Vec::new(),
            free: Vec::new(),
            by_name: FxHashMap::default(),
            postings: FxHashMap::default(),
            totals: [0; FIELDS],
            live: 0,
        }
    }

    /// An index of these definitions.
    pub fn from_definitions<'a>(definitions: impl IntoIterator<Item = &'a ToolDefinition>) -> Self {
        let mut index = Self::new();
        for definition in definitions {
            index.insert(definition);
        }
        index
    }

    /// How many tools it holds.
    pub fn len(&self) -> usize {
        self.live as usize
    }

    /// Whether it holds no tool.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Whether it holds a tool called `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Add a tool, replacing one of the same name.
    pub fn insert(&mut self, definition: &ToolDefinition) {
        self.remove(definition.name());
        let (mut name, mut description) = (Vec::new(), Vec::new());
        let (mut param_names, mut param_docs) = (Vec::new(), Vec::new());
        text::terms(definition.name(), &mut name);
        text::terms(definition.description(), &mut description);
        parameters(
            definition.parameters(),
            &mut param_names,
            &mut param_docs,
            0,
        );
        let mut fields: [Vec<String>; FIELDS] = Default::default();
        fields[NAME] = name;
        fields[DESCRIPTION] = description;
        fields[PARAM_NAMES] = param_names;
        fields[PARAM_DOCS] = param_docs;
        let mut counts: FxHashMap<&str, [u16; FIELDS]> = FxHashMap::default();
        let mut lengths = [0u32; FIELDS];
        for (field, terms) in fields.iter().enumerate() {
            lengths[field] = terms.len() as u32;
            self.totals[field] += terms.len() as u64;
            for term in terms {
                let c = &mut counts.entry(term.as_str()).or_default()[field];
                *c = c.saturating_add(1);
            }
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.docs.push(None);
                (self.docs.len() - 1) as u32
            }
        };
        let mut terms: Vec<Box<str>> = Vec::with_capacity(counts.len());
        for (term, counts) in counts {
            let term: Box<str> = term.into();
            self.postings
                .entry(term.clone())
                .or_default()
                .push(Posting { doc: id, counts });
            terms.push(term);
        }
        self.docs[id as usize] = Some(Doc {
            name: definition.name().to_string(),
            summary: summary(definition.description()),
            lengths,
            terms,
        });
        self.by_name.insert(definition.name().to_string(), id);
        self.live += 1;
    }

    /// Remove the tool called `name`; whether there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(id) = self.by_name.remove(name) else {
            return false;
        };
        let Some(doc) = self.docs[id as usize].take() else {
            return false;
        };
        for term in &doc.terms {
            if let Some(list) = self.postings.get_mut(term) {
                list.retain(|p| p.doc != id);
                if list.is_empty() {
                    self.postings.remove(term);
                }
            }
        }
        for (total, len) in self.totals.iter_mut().zip(doc.lengths) {
            *total -= u64::from(len);
        }
        self.free.push(id);
        self.live -= 1;
        true
    }

    /// The `limit` best tools for `query`, best first; tools sharing no term with it are
    /// never returned.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        self.search_where(query, limit, |_| true)
    }

    /// [`search`](Self::search) among the tools `keep` accepts (by name).
    pub fn search_where(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(&str) -> bool,
    ) -> Vec<SearchHit> {
        if limit == 0 || self.live == 0 {
            return Vec::new();
        }
        let mut terms = Vec::new();
        text::terms(query, &mut terms);
        terms.sort_unstable();
        terms.dedup();
        let SearchSettings { k1, b, weights } = self.settings;
        let n = f64::from(self.live);
        let average: [f32; FIELDS] =
            std::array::from_fn(|f| ((self.totals[f] as f64 / n) as f32).max(1.0));
        let mut scores = vec![0f32; self.docs.len()];
        for term in &terms {
            let Some(list) = self.postings.get(term.as_str()) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5)).ln_1p() as f32;
            for posting in list {
                let Some(doc) = &self.docs[posting.doc as usize] else {
                    continue;
                };
                let mut tf = 0f32;
                for f in 0..FIELDS {
                    let count = posting.counts[f];
                    if count == 0 {
                        continue;
                    }
                    let norm = 1.0 - b + b * doc.lengths[f] as f32 / average[f];
                    tf += weights.get(f) * f32::from(count) / norm;
                }
                scores[posting.doc as usize] += idf * tf * (k1 + 1.0) / (k1 + tf);
            }
        }
        let mut found: Vec<(f32, &Doc)> = scores
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .filter_map(|(i, s)| self.docs[i].as_ref().map(|d| (*s, d)))
            .filter(|(_, d)| keep(&d.name))
            .collect();
        let order = |a: &(f32, &Doc), b: &(f32, &Doc)| {
            b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name))
        };
        if found.len() > limit {
            found.select_nth_unstable_by(limit - 1, order);
            found.truncate(limit);
        }
        found.sort_unstable_by(order);
        found
            .into_iter()
            .map(|(score, doc)| SearchHit {
                name: doc.name.clone(),
                summary: doc.summary.clone(),
                score,
            })
            .collect()
    }
}

/// Parameter names and descriptions of a JSON Schema, nested objects and array items
/// included (to a depth of 4).
fn parameters(schema: &Value, names: &mut Vec<String>, docs: &mut Vec<String>, depth: usize) {
    if depth > 4 {
        return;
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            text::terms(name, names);
            if let Some(doc) = property.get("description").and_then(Value::as_str) {
                text::terms(doc, docs);
            }
            parameters(property, names, docs, depth + 1);
        }
    }
    if let Some(items) = schema.get("items") {
        parameters(items, names, docs, depth + 1);
    }
}

/// The first sentence of a description, at most 160 characters.
fn summary(description: &str) -> String {
    let line = description.trim().lines().next().unwrap_or("").trim();
    let end = line
        .char_indices()
        .find(|&(i, c)| c == '.' && line[i + 1..].starts_with(' '))
        .map_or(line.len(), |(i, _)| i + 1);
    let sentence = &line[..end];
    if sentence.chars().count() <= 160 {
        return sentence.to_string();
    }
    let mut cut: String = sentence.chars().take(159).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str, description: &str, params: Value) -> ToolDefinition {
        ToolDefinition::new(name, description, params)
    }

    fn corpus() -> ToolIndex {
        ToolIndex::from_definitions(&[
            tool(
                "get_weather",
                "Current weather for a city.",
                json!({"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}}),
            ),
            tool(
                "getStockPrice",
                "The latest price of a stock.",
                json!({"type": "object", "properties": {"ticker": {"type": "string", "description": "Ticker symbol, e.g. AAPL"}}}),
            ),
            tool(
                "send_email",
                "Send an email to someone.",
                json!({"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}}),
            ),
            tool(
                "forecast",
                "Weather forecasts for the coming days.",
                json!({"type": "object", "properties": {"location": {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}}}}),
            ),
        ])
    }

    #[test]
    fn ranks_by_name_description_and_parameters() {
        let index = corpus();
        let names =
            |q: &str| -> Vec<String> { index.search(q, 3).into_iter().map(|h| h.name).collect() };
        assert_eq!(names("weather in a city")[0], "get_weather");
        assert_eq!(names("stock price")[0], "getStockPrice");
        assert_eq!(names("AAPL ticker")[0], "getStockPrice");
        assert_eq!(names("forecasts for the next days")[0], "forecast");
        assert_eq!(names("lat lon")[0], "forecast");
        assert!(names("zebra").is_empty());
    }

    #[test]
    fn ties_break_by_name_and_limits_hold() {
        let index = ToolIndex::from_definitions(&[
            tool("b_tool", "same words", json!({})),
            tool("a_tool", "same words", json!({})),
            tool("c_tool", "same words", json!({})),
        ]);
        let hits = index.search("same words", 2);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].name, "a_tool");
        assert_eq!(hits[1].name, "b_tool");
        assert!(index.search("same", 0).is_empty());
    }

    #[test]
    fn updates_are_incremental_and_exact() {
        let mut index = corpus();
        let fresh = ToolIndex::from_definitions(&[
            tool(
                "get_weather",
                "Current weather for a city.",
                json!({"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}}),
            ),
            tool(
                "forecast",
                "Weather forecasts for the coming days.",
                json!({"type": "object", "properties": {"location": {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}}}}),
            ),
        ]);
        assert!(index.remove("send_email"));
        assert!(index.remove("getStockPrice"));
        assert!(!index.remove("getStockPrice"));
        assert_eq!(index.len(), 2);
        // Same statistics as an index built with the remaining tools only: same scores.
        assert_eq!(index.search("weather", 5), fresh.search("weather", 5));
        // A replaced tool is found by its new text only.
        index.insert(&tool("forecast", "Tide tables.", json!({})));
        assert_eq!(index.len(), 2);
        assert_eq!(index.search("tide", 5)[0].name, "forecast");
        assert!(index.search("lat", 5).is_empty());
        // Freed slots are reused.
        index.insert(&tool("new_one", "Brand new.", json!({})));
        assert_eq!(index.search("brand", 1)[0].name, "new_one");
    }

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

    #[test]
    fn filters_and_summaries() {
        let index = corpus();
        let hits = index.search_where("weather", 5, |name| name != "get_weather");
        assert_eq!(hits[0].name, "forecast");
        assert_eq!(summary("First one. Second one."), "First one.");
        assert_eq!(summary("v1.2 is here\nmore"), "v1.2 is here");
        assert_eq!(summary(&"x".repeat(300)).chars().count(), 160);
    }
}
