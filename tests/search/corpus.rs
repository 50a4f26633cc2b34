//! The BFCL tool-search benchmark (method and rules: `tests/search/METHOD.md`): the corpus
//! extracted by `setup.sh`, the deterministic distractors that take it to 10,000 tools, the
//! dev/test split, and recall@k / MRR of an index over it. Shared by the quality test
//! (`tests/search/main.rs`) and the latency bench (`tests/benches/search.rs`).

use std::path::PathBuf;

use agent_toolkit::ToolDefinition;
use agent_toolkit::search::{SearchSettings, ToolIndex};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// One tool of the corpus, as extracted.
#[derive(Clone, Deserialize)]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// One question and the corpus index of its ground-truth definition.
#[derive(Clone, Deserialize)]
pub struct Query {
    pub id: String,
    pub text: String,
    pub relevant: Vec<usize>,
}

#[derive(Deserialize)]
pub struct Corpus {
    pub tools: Vec<Tool>,
    pub queries: Vec<Query>,
}

/// Where `setup.sh` puts the extracted corpus.
pub fn path() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("search").join("bfcl.json")
}

/// The corpus, or `None` (with one loud line) when it was not set up — except under CI,
/// where `.ci/run` sets it up and its absence is a failure.
pub fn load() -> Option<Corpus> {
    let path = path();
    match std::fs::read(&path) {
        Ok(bytes) => Some(serde_json::from_slice(&bytes).expect("the extracted corpus parses")),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!(
                "the BFCL corpus is missing at {} ({e}); run tests/search/setup.sh",
                path.display()
            )
        }
        Err(e) => {
            eprintln!(
                "SKIPPED: the BFCL corpus is not at {} ({e}); run `bash tests/search/setup.sh`",
                path.display()
            );
            None
        }
    }
}

/// splitmix64: all arithmetic wrapping.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Plausible tools that answer none of the questions, to take the corpus to `total`: each
/// joins the front half of one real tool (name parts, description words, parameters in name
/// order) to the back half of another, never reusing a name.
pub fn distractors(tools: &[Tool], total: usize) -> Vec<Tool> {
    let mut rng = SplitMix64(0x5EED);
    let n = tools.len();
    let mut used: std::collections::HashSet<String> =
        tools.iter().map(|t| t.name.clone()).collect();
    let mut out = Vec::new();
    let front = |len: usize| 0..len.div_ceil(2);
    let back = |len: usize| len / 2..len;
    while n + out.len() < total {
        let a = &tools[rng.below(n)];
        let b = &tools[rng.below(n)];
        if a.name == b.name {
            continue;
        }
        let parts = |s: &str| -> Vec<String> {
            s.split(['.', '_', '-'])
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let (pa, pb) = (parts(&a.name), parts(&b.name));
        let mut name_parts = pa[front(pa.len())].to_vec();
        name_parts.extend_from_slice(&pb[back(pb.len())]);
        let name = name_parts.join("_");
        if !used.insert(name.clone()) {
            continue;
        }
        let words = |s: &str| -> Vec<String> {
            s.split(' ')
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let (wa, wb) = (words(&a.description), words(&b.description));
        let mut description = wa[front(wa.len())].to_vec();
        description.extend_from_slice(&wb[back(wb.len())]);
        let mut properties = Map::new();
        let mut required = Vec::new();
        for (source, first) in [(a, true), (b, false)] {
            let props = source
                .parameters
                .get("properties")
                .and_then(Value::as_object);
            let mut keys: Vec<&String> = props.map(|p| p.keys().collect()).unwrap_or_default();
            keys.sort();
            let range = if first {
                front(keys.len())
            } else {
                back(keys.len())
            };
            let source_required: Vec<&str> = source
                .parameters
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for key in &keys[range] {
                if properties.contains_key(key.as_str()) {
                    continue;
                }
                properties.insert((*key).clone(), props.unwrap()[key.as_str()].clone());
                if source_required.contains(&key.as_str()) {
                    required.push(json!(key));
                }
            }
        }
        out.push(Tool {
            name,
            description: description.join(" "),
            parameters: json!({"type": "object", "properties": properties, "required": required}),
        });
    }
    out
}

/// A digest of the distractors, to compare with the one in METHOD.md: the first 16 hex digits
/// of the sha256 of `name TAB description TAB keys TAB required LF` per distractor.
pub fn digest(distractors: &[Tool]) -> String {
    let mut text = String::new();
    for t in distractors {
        let keys: Vec<&str> = t.parameters["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let required: Vec<&str> = t.parameters["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\n",
            t.name,
            t.description,
            keys.join(","),
            required.join(",")
        ));
    }
    sha256_hex(text.as_bytes())[..16].to_string()
}

/// Whether a question is in the half the method was chosen on: the first byte of the sha256
/// of its id is even.
pub fn is_dev(query: &Query) -> bool {
    let hex = sha256_hex(query.id.as_bytes());
    u8::from_str_radix(&hex[..2], 16).unwrap().is_multiple_of(2)
}

/// The index of `tools` with the default settings, each under its corpus index (names repeat
/// in the corpus).
pub fn index(tools: &[Tool]) -> ToolIndex {
    index_with(tools, SearchSettings::default())
}

/// [`index`] with these settings.
pub fn index_with(tools: &[Tool], settings: SearchSettings) -> ToolIndex {
    fill(ToolIndex::with_settings(settings), tools)
}

/// `index` with the corpus's tools added, each under its position.
pub fn fill(mut index: ToolIndex, tools: &[Tool]) -> ToolIndex {
    for (i, t) in tools.iter().enumerate() {
        let definition =
            ToolDefinition::new(t.name.clone(), t.description.clone(), t.parameters.clone());
        index.insert_as(&i.to_string(), &definition);
    }
    index
}

/// Recall at 1, 5 and 10 and MRR (over the top 10) of `queries` against `index`: a hit is a
/// tool with the ground truth's name (the corpus holds reworded copies of many tools).
#[derive(Clone, Copy, Debug, Default)]
pub struct Figures {
    pub queries: usize,
    pub r1: f64,
    pub r5: f64,
    pub r10: f64,
    pub mrr: f64,
}

pub fn evaluate(index: &ToolIndex, tools: &[Tool], queries: &[&Query]) -> Figures {
    let mut f = Figures {
        queries: queries.len(),
        ..Figures::default()
    };
    for q in queries {
        let gold = &tools[q.relevant[0]].name;
        let hits = index.search(&q.text, 10);
        if let Some(rank) = hits.iter().position(|h| &h.name == gold).map(|p| p + 1) {
            f.r1 += f64::from(u8::from(rank <= 1));
            f.r5 += f64::from(u8::from(rank <= 5));
            f.r10 += 1.0;
            f.mrr += 1.0 / rank as f64;
        }
    }
    let n = queries.len().max(1) as f64;
    f.r1 /= n;
    f.r5 /= n;
    f.r10 /= n;
    f.mrr /= n;
    f
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
