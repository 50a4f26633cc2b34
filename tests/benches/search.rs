//! Tool search at 10,000 tools: the BFCL corpus taken to 10,000 with the benchmark's
//! distractors (`tests/search/`), queried with its 2,061 questions.
//!
//! - `search/index_10k`: one question against `ToolIndex` (the questions taken in turn);
//! - `search/toolkit_10k`: the same through `Toolkit::search_tools` of a toolkit whose 10,000
//!   tools are deferred (the scope's filter, the lock, the index kept up to date);
//! - `build/index_10k`: indexing the 10,000 tools;
//! - `search/index_10k_semantic`, `build/index_10k_semantic`: the same with the ranking by
//!   meaning fused in (the static model `tests/search/setup.sh` distills; skipped without it);
//! - `update/add_100_remove_100`: 100 tools added to the 10,000-tool index and removed again;
//! - `update/toolkit_dynamic_plus_100`: after a dynamic set of 10,000 tools was replaced by one
//!   with 100 more, the first search (which brings the index up to date).
//!
//! Before criterion runs, it prints each question's own time as p50 / p99 / max (criterion
//! reports means of batches), and the bytes of tool definitions a request carries with 10,000
//! registered tools, all shown vs deferred. Needs `bash tests/search/setup.sh` first. Run with
//! `cargo bench -p agent-toolkit-examples --features full --bench search`.

#[allow(
    dead_code,
    reason = "the quality test (tests/search) uses the rest of the module"
)]
#[path = "../search/corpus.rs"]
mod corpus;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_toolkit::prelude::*;
use agent_toolkit::search::{
    FieldWeights, SearchSettings, Stemming, ToolIndex, search_tool_definition,
};
use agent_toolkit::tool::{ToolArgs, ToolFuture, ToolSpec};
use agent_toolkit::toolkit::DynamicTools;
use agent_toolkit::{AgentTool, Dialect, ToolDefinition};
use corpus::Tool;
use criterion::{BatchSize, Criterion, criterion_group};

/// A corpus tool as a toolkit tool (names made unique: the corpus repeats some).
struct CorpusTool {
    name: String,
    tool: Tool,
}

impl AgentTool for CorpusTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(self.name.clone(), self.tool.description.clone())
            .with_input_schema(self.tool.parameters.clone())
    }

    fn call(&self, _: ToolArgs) -> ToolFuture {
        Box::pin(async { Ok(ToolOutput::text("ok")) })
    }
}

fn unique_tools(tools: &[Tool]) -> Vec<Arc<dyn AgentTool>> {
    let mut seen = std::collections::HashSet::new();
    tools
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let base: String = t
                .name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let name = if seen.insert(base.clone()) {
                base
            } else {
                format!("{base}_v{i}")
            };
            seen.insert(name.clone());
            Arc::new(CorpusTool {
                name,
                tool: t.clone(),
            }) as Arc<dyn AgentTool>
        })
        .collect()
}

fn percentiles(mut times: Vec<Duration>) -> (Duration, Duration, Duration) {
    times.sort();
    let at = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)];
    (at(0.5), at(0.99), *times.last().unwrap())
}

fn benches(c: &mut Criterion) {
    let Some(corpus) = corpus::load() else {
        return;
    };
    let mut tools = corpus.tools.clone();
    tools.extend(corpus::distractors(&corpus.tools, 10_000));
    let questions: Vec<String> = corpus.queries.iter().map(|q| q.text.clone()).collect();
    let index = corpus::index(&tools);
    // The method before issue 32, in the same run: the light stemmer, one bag of words, distinct
    // query terms, no joined words.
    let issue_21 = SearchSettings::default()
        .with_stemming(Stemming::Light)
        .with_fields(FieldWeights::default())
        .with_join_words(false)
        .with_query_k3(0.0);
    let before = corpus::index_with(&tools, issue_21);
    // With the ranking by meaning (the distilled model of tests/search/setup.sh), when there.
    let model =
        agent_toolkit::search::Embeddings::from_dir(corpus::path().with_file_name("minilm-static"))
            .map(Arc::new)
            .map_err(|e| eprintln!("no semantic figures: {e}"))
            .ok();
    let semantic = model.as_ref().map(|model| {
        let start = Instant::now();
        let index = corpus::fill(
            ToolIndex::with_embeddings(SearchSettings::default(), model.clone()),
            &tools,
        );
        println!(
            "index with meaning, 10,000 tools: built in {:?}",
            start.elapsed()
        );
        index
    });

    // Deferred, in one group: the model is shown only `search_tools`.
    let set = DynamicTools::new();
    set.replace(unique_tools(&tools)).unwrap();
    let toolkit = Toolkit::builder()
        .deferred_group("catalog", "Everything")
        .dynamic("catalog", &set)
        .build()
        .unwrap();
    assert_eq!(toolkit.snapshot().deferred().len(), 10_000);

    // Each question's own time, over every question, three rounds.
    for (label, search) in [
        (
            "ToolIndex::search",
            &(|q: &str| index.search(q, 5).len()) as &dyn Fn(&str) -> usize,
        ),
        ("Toolkit::search_tools", &|q: &str| {
            toolkit.search_tools(q, 5).len()
        }),
        ("ToolIndex::search, issue 21's settings", &|q: &str| {
            before.search(q, 5).len()
        }),
        ("ToolIndex::search with meaning", &|q: &str| {
            semantic.as_ref().map_or(0, |i| i.search(q, 5).len())
        }),
    ] {
        if label.ends_with("with meaning") && semantic.is_none() {
            continue;
        }
        let mut times = Vec::new();
        for _ in 0..3 {
            for q in &questions {
                let start = Instant::now();
                std::hint::black_box(search(q));
                times.push(start.elapsed());
            }
        }
        let (p50, p99, max) = percentiles(times);
        println!(
            "{label}, 10,000 tools, {} questions: p50 {p50:?}, p99 {p99:?}, max {max:?}",
            questions.len()
        );
    }

    // Bytes of tool definitions in a request, 10,000 tools registered.
    let shown = Toolkit::builder()
        .group("catalog", "Everything")
        .dynamic("catalog", &set)
        .build()
        .unwrap();
    let all = serde_json::to_vec(&shown.definitions_for(Dialect::OpenAi))
        .unwrap()
        .len();
    let search = search_tool_definition("catalog (Everything)");
    let deferred = serde_json::to_vec(&[Dialect::OpenAi.render(&search, search.name())])
        .unwrap()
        .len();
    println!(
        "definitions per request with 10,000 tools: all shown {all} bytes, deferred {deferred} bytes (search_tools alone), {:.0}x fewer",
        all as f64 / deferred as f64
    );

    let mut group = c.benchmark_group("search");
    let mut n = 0;
    group.bench_function("index_10k", |b| {
        b.iter(|| {
            n = (n + 1) % questions.len();
            index.search(&questions[n], 5)
        })
    });
    group.bench_function("toolkit_10k", |b| {
        b.iter(|| {
            n = (n + 1) % questions.len();
            toolkit.search_tools(&questions[n], 5)
        })
    });
    if let Some(semantic) = &semantic {
        group.bench_function("index_10k_semantic", |b| {
            b.iter(|| {
                n = (n + 1) % questions.len();
                semantic.search(&questions[n], 5)
            })
        });
    }
    group.finish();

    let definitions: Vec<ToolDefinition> = tools
        .iter()
        .map(|t| ToolDefinition::new(t.name.clone(), t.description.clone(), t.parameters.clone()))
        .collect();
    let mut group = c.benchmark_group("build");
    group.sample_size(20);
    group.bench_function("index_10k", |b| {
        b.iter_with_large_drop(|| {
            let mut index = ToolIndex::new();
            for (i, d) in definitions.iter().enumerate() {
                index.insert_as(&i.to_string(), d);
            }
            index
        })
    });
    if let Some(model) = &model {
        group.sample_size(10);
        group.bench_function("index_10k_semantic", |b| {
            b.iter_with_large_drop(|| {
                let mut index =
                    ToolIndex::with_embeddings(SearchSettings::default(), model.clone());
                for (i, d) in definitions.iter().enumerate() {
                    index.insert_as(&i.to_string(), d);
                }
                index
            })
        });
        group.sample_size(20);
    }
    group.bench_function("index_10k_issue_21_settings", |b| {
        b.iter_with_large_drop(|| {
            let mut index = ToolIndex::with_settings(issue_21);
            for (i, d) in definitions.iter().enumerate() {
                index.insert_as(&i.to_string(), d);
            }
            index
        })
    });
    group.finish();

    let extra: Vec<ToolDefinition> = definitions[..100]
        .iter()
        .map(|d| {
            ToolDefinition::new(
                format!("{}_extra", d.name()),
                d.description(),
                d.parameters().clone(),
            )
        })
        .collect();
    let mut grown = corpus::index(&tools);
    let mut group = c.benchmark_group("update");
    group.bench_function("add_100_remove_100", |b| {
        b.iter(|| {
            for d in &extra {
                grown.insert(d);
            }
            for d in &extra {
                grown.remove(d.name());
            }
        })
    });
    let mut bigger = tools.clone();
    bigger.extend(tools[..100].iter().map(|t| Tool {
        name: format!("{}_extra", t.name),
        ..t.clone()
    }));
    let (small_set, big_set) = (unique_tools(&tools), unique_tools(&bigger));
    group.sample_size(20);
    group.bench_function("toolkit_dynamic_plus_100", |b| {
        // The set's replacement (compiling 10,100 schemas) is set-up; the search brings the
        // index up to date (a diff of the two sets, 100 tools indexed) and answers.
        b.iter_batched(
            || {
                set.replace(small_set.clone()).unwrap();
                toolkit.search_tools("weather", 1);
                set.replace(big_set.clone()).unwrap();
            },
            |()| toolkit.search_tools("weather", 1),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(search, benches);

fn main() {
    search();
    Criterion::default().configure_from_args().final_summary();
}
