//! Tool search quality on a public corpus: the Berkeley Function-Calling Leaderboard's
//! function definitions and single-call questions (PyPI `bfcl-eval==2026.3.23`, set up by
//! `tests/search/setup.sh`). Query = the user's words, relevant = the ground-truth function.
//!
//! The method (`agent_toolkit::search`) was chosen on the dev half of the questions; the test
//! half is what the figures and the targets below are about. The full corpus, and the corpus
//! taken to 10,000 tools with deterministic distractors (`corpus::distractors`). Outside CI,
//! without the corpus, the tests skip with one loud line.

mod bfcl_checker;
mod corpus;
mod mcp_corpus;
#[cfg(feature = "semantic")]
mod semantic;

use agent_toolkit::ToolDefinition;
use agent_toolkit::search::{FieldWeights, SearchSettings, Stemming, ToolIndex};
use corpus::{Figures, Query, Tool};
use mcp_corpus::{McpFigures, McpQuery};

/// Okapi BM25 over METHOD.md's terms (the light stemmer, one bag of words, distinct query
/// terms): the baseline every figure is compared with, and the core the golden rankings pin.
fn plain_bm25() -> SearchSettings {
    SearchSettings::default()
        .plain()
        .with_one_per_name(false)
        .with_stemming(Stemming::Light)
        .with_fields(FieldWeights::default())
        .with_join_words(false)
        .with_query_k3(0.0)
        .with_split_needs(false)
}

/// The method before issue 32 (chosen on BFCL alone): the light stemmer, one bag of words,
/// pairs and name coverage, one entry per name.
fn issue_21_method() -> SearchSettings {
    plain_bm25()
        .with_pair_weight(0.15)
        .with_name_coverage(1.5)
        .with_one_per_name(true)
}

/// Both corpora and their distractors in one index: BFCL's tools under their corpus index, the
/// MCP tools under their keys, the distractors as `distractor/N`.
fn mixed_index(
    settings: SearchSettings,
    bfcl: &[Tool],
    mcp: &[mcp_corpus::McpTool],
    distractors: &[Tool],
) -> ToolIndex {
    fill_mixed(ToolIndex::with_settings(settings), bfcl, mcp, distractors)
}

/// [`mixed_index`] into an index made by the caller.
fn fill_mixed(
    mut index: ToolIndex,
    bfcl: &[Tool],
    mcp: &[mcp_corpus::McpTool],
    distractors: &[Tool],
) -> ToolIndex {
    let definition =
        |t: &Tool| ToolDefinition::new(t.name.clone(), t.description.clone(), t.parameters.clone());
    for (i, t) in bfcl.iter().enumerate() {
        index.insert_as(&i.to_string(), &definition(t));
    }
    mcp_corpus::insert(&mut index, mcp);
    for (i, t) in distractors.iter().enumerate() {
        index.insert_as(&format!("distractor/{i}"), &definition(t));
    }
    index
}

fn halves(queries: &[Query]) -> (Vec<&Query>, Vec<&Query>) {
    queries.iter().partition(|q| corpus::is_dev(q))
}

fn row(label: &str, f: Figures) -> String {
    format!(
        "| {label} | {} | {:.4} | {:.4} | {:.4} | {:.4} |",
        f.queries, f.r1, f.r5, f.r10, f.mrr
    )
}

#[test]
fn recall_on_the_test_half_meets_the_targets_at_both_sizes() {
    let Some(corpus) = corpus::load() else {
        return;
    };
    let (dev, test) = halves(&corpus.queries);
    assert_eq!(
        (dev.len(), test.len()),
        (1056, 1005),
        "the split of METHOD.md"
    );
    let full = corpus::index(&corpus.tools);
    let mut tools: Vec<Tool> = corpus.tools.clone();
    tools.extend(corpus::distractors(&corpus.tools, 10_000));
    let large = corpus::index(&tools);
    let figures = [
        ("full, dev", corpus::evaluate(&full, &corpus.tools, &dev)),
        ("full, test", corpus::evaluate(&full, &corpus.tools, &test)),
        ("10k, dev", corpus::evaluate(&large, &tools, &dev)),
        ("10k, test", corpus::evaluate(&large, &tools, &test)),
    ];
    println!("| corpus, half | questions | R@1 | R@5 | R@10 | MRR |\n|---|---|---|---|---|---|");
    for (label, f) in figures {
        println!("{}", row(label, f));
    }
    // What each part of the method adds, on both halves: BM25 alone with the method's terms
    // (METHOD.md §3, as measured in Python), then pairs and name coverage, then one entry per name.
    let steps = [
        ("BM25 alone, every definition", plain_bm25()),
        (
            "+ pairs, name coverage",
            plain_bm25().with_pair_weight(0.15).with_name_coverage(1.5),
        ),
        (
            "+ the settings of issue 32",
            SearchSettings::default().with_one_per_name(false),
        ),
        ("issue 21's method (one entry per name)", issue_21_method()),
    ];
    for (label, settings) in steps {
        let full = corpus::index_with(&corpus.tools, settings);
        let large = corpus::index_with(&tools, settings);
        for (size, index, all) in [("full", &full, &corpus.tools), ("10k", &large, &tools)] {
            for (half, queries) in [("dev", &dev), ("test", &test)] {
                let f = corpus::evaluate(index, all, queries);
                println!("{}", row(&format!("{label}: {size}, {half}"), f));
            }
        }
    }
    let (full_test, large_test) = (figures[1].1, figures[3].1);
    assert!(
        full_test.r5 >= 0.85,
        "recall@5, full corpus: {:.4}",
        full_test.r5
    );
    assert!(
        large_test.r5 >= 0.75,
        "recall@5, 10,000 tools: {:.4}",
        large_test.r5
    );
}

#[test]
fn the_distractors_are_the_ones_of_the_method_notes() {
    let Some(corpus) = corpus::load() else {
        return;
    };
    assert_eq!(corpus.tools.len(), 3255);
    let distractors = corpus::distractors(&corpus.tools, 10_000);
    assert_eq!(distractors.len(), 6745);
    let first: Vec<&str> = distractors
        .iter()
        .take(3)
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(
        first,
        [
            "park_search_1_GetTrainTickets",
            "releases_api_ReleasesApi_weather_data",
            "list_eat_order"
        ]
    );
    assert_eq!(corpus::digest(&distractors), "b89b58d5413d2c9e");
}

/// A question and its top three: name, corpus index, score to 4 decimals.
type Golden = (&'static str, &'static [(&'static str, usize, f64)]);

/// Golden rankings from the Python evaluation of the BM25 core (METHOD.md §5): the Rust index
/// tokenizes, ranks and scores exactly as the method was measured there.
#[test]
fn golden_rankings_match_the_method_notes() {
    let Some(corpus) = corpus::load() else {
        return;
    };
    let settings = plain_bm25();
    let index = corpus::index_with(&corpus.tools, settings);
    let golden: &[Golden] = &[
        (
            "simple_python_0",
            &[
                ("calculate_triangle_area", 1009, 28.5789),
                ("calculate_triangle_area", 1010, 28.5789),
                ("calc_area_triangle", 825, 28.4622),
            ],
        ),
        (
            "simple_python_100",
            &[
                ("light_travel_time", 2194, 17.4686),
                ("light_travel_time", 2195, 17.4686),
                ("Hotels_4_SearchHotel", 294, 11.2565),
            ],
        ),
        (
            "simple_java_0",
            &[
                ("GeometryPresentation.createPresentation", 232, 82.9618),
                ("PlainTextPresentation.createPresentation", 411, 60.5177),
                ("dartfx_help", 1221, 21.5196),
            ],
        ),
        (
            "multiple_100",
            &[
                ("math.hcf", 2260, 17.0230),
                ("primeFactors", 2484, 10.8613),
                ("music_analysis.find_common_chords", 2343, 10.8452),
            ],
        ),
        (
            "live_simple_100-59-1",
            &[
                ("doNothing", 1271, 27.2303),
                ("connectBluetooth", 1124, 26.4158),
                ("connect_to_server", 1127, 18.2322),
            ],
        ),
        (
            "live_multiple_500-148-10",
            &[
                ("Events_3_FindEvents", 173, 28.4860),
                ("Events_3_FindEvents", 163, 28.1521),
                ("Events_3_FindEvents", 172, 27.9935),
            ],
        ),
        (
            "live_multiple_1000-231-0",
            &[
                (
                    "MaintenanceConfigurationApi.get_maintenance_config",
                    315,
                    15.7874,
                ),
                (
                    "MaintenanceConfigurationApi.get_maintenance_config",
                    314,
                    15.6567,
                ),
                ("get_maintenance_configs", 1801, 15.0272),
            ],
        ),
    ];
    for (id, expected) in golden {
        let query = corpus
            .queries
            .iter()
            .find(|q| q.id == *id)
            .expect("a golden query");
        let hits = index.search(&query.text, 3);
        let got: Vec<(&str, usize, f64)> = hits
            .iter()
            .map(|h| {
                (
                    h.name.as_str(),
                    h.key.parse().unwrap(),
                    (h.score * 1e4).round() / 1e4,
                )
            })
            .collect();
        assert_eq!(&got, expected, "{id}: {}", query.text);
    }
}

fn mcp_row(label: &str, f: McpFigures) -> String {
    format!(
        "| {label} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {} | {:.4} |",
        f.queries, f.r1, f.r5, f.r10, f.mrr, f.multi, f.all_needs5
    )
}

/// The method and plain BM25 (the method's terms, no pairs, no name coverage) on the MCP
/// corpus, and on the mix of both corpora taken to 10,000 tools, per source and half: the
/// per-source table every change to the method is judged by (BENCHMARKS.md, "Tool search").
#[test]
fn per_source_figures_on_the_mcp_corpus_and_the_mix() {
    let mcp = mcp_corpus::load();
    let (dev, test): (Vec<&McpQuery>, Vec<&McpQuery>) =
        mcp.queries.iter().partition(|q| mcp_corpus::is_dev(q));
    println!(
        "MCP corpus: {} tools of {} servers, {} queries ({} dev, {} test)",
        mcp.tools.len(),
        mcp.tools
            .iter()
            .map(|t| &t.server)
            .collect::<std::collections::HashSet<_>>()
            .len(),
        mcp.queries.len(),
        dev.len(),
        test.len()
    );
    println!(
        "| method: corpus, source, half | queries | R@1 | R@5 | R@10 | MRR | multi-need | all needs@5 |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let methods = [
        ("method", SearchSettings::default()),
        ("issue 21's method", issue_21_method()),
        ("plain BM25", plain_bm25()),
    ];
    let mut mcp_test = Vec::new();
    for (label, settings) in methods {
        let index = mcp_corpus::index_with(&mcp.tools, settings);
        for (half, queries) in [("dev", &dev), ("test", &test)] {
            let f = mcp_corpus::evaluate(&index, queries);
            println!("{}", mcp_row(&format!("{label}: MCP, {half}"), f));
            if half == "test" {
                mcp_test.push(f);
            }
        }
    }
    // Where the method stands (a floor against regressions; the issue's targets are higher),
    // and never below plain BM25 on this source.
    assert!(mcp_test[0].r5 >= MCP_TEST_R5_FLOOR, "{:?}", mcp_test[0]);
    assert!(mcp_test[0].r5 >= mcp_test[2].r5, "{:?}", mcp_test);

    let Some(bfcl) = corpus::load() else {
        return;
    };
    let (bfcl_dev, bfcl_test) = halves(&bfcl.queries);
    let mut tools: Vec<Tool> = bfcl.tools.clone();
    tools.extend(mcp_corpus::as_corpus_tools(&mcp.tools));
    let distractors = corpus::distractors(&tools, 10_000);
    for (label, settings) in methods {
        let index = mixed_index(settings, &bfcl.tools, &mcp.tools, &distractors);
        assert_eq!(index.len(), 10_000);
        for (half, queries) in [("dev", &dev), ("test", &test)] {
            let f = mcp_corpus::evaluate(&index, queries);
            println!("{}", mcp_row(&format!("{label}: mix 10k, MCP, {half}"), f));
        }
        for (half, queries) in [("dev", &bfcl_dev), ("test", &bfcl_test)] {
            let f = corpus::evaluate(&index, &bfcl.tools, queries);
            println!(
                "| {label}: mix 10k, BFCL, {half} | {} | {:.4} | {:.4} | {:.4} | {:.4} | | |",
                f.queries, f.r1, f.r5, f.r10, f.mrr
            );
        }
    }
}

/// Recall@5 of the method on the MCP corpus's test half, 0.7395 as measured (BENCHMARKS.md),
/// less a little: a floor against regressions (the issue's target, 0.92, is not reached).
const MCP_TEST_R5_FLOOR: f64 = 0.73;

/// The settings tried for the method, each on the dev halves of both corpora and of their
/// mix at 10,000 tools, per source (what BENCHMARKS.md's "what was tried" lines come from).
#[test]
#[ignore = "a sweep of settings for choosing the method (minutes in release): cargo test --release --test search -- --ignored --nocapture"]
fn settings_sweep_on_the_dev_halves() {
    let mcp = mcp_corpus::load();
    let mcp_dev: Vec<&McpQuery> = mcp
        .queries
        .iter()
        .filter(|q| mcp_corpus::is_dev(q))
        .collect();
    let bfcl = corpus::load().expect("the BFCL corpus: run tests/search/setup.sh");
    let (bfcl_dev, _) = halves(&bfcl.queries);
    let mut mixed: Vec<Tool> = bfcl.tools.clone();
    mixed.extend(mcp_corpus::as_corpus_tools(&mcp.tools));
    let distractors = corpus::distractors(&mixed, 10_000);
    // Each row is issue 21's method with one change, or a combination of changes.
    let base = issue_21_method();
    let mut tried: Vec<(String, SearchSettings)> = vec![
        ("method".into(), SearchSettings::default()),
        ("issue 21's method".into(), base),
        ("plain".into(), plain_bm25()),
        ("snowball".into(), base.with_stemming(Stemming::Snowball)),
    ];
    for k3 in [0.5, 1.2, 3.0, 8.0] {
        tried.push((format!("query k3 {k3}"), base.with_query_k3(k3)));
    }
    for (n, d, p) in [
        (2.0, 1.0, 1.0),
        (3.0, 1.0, 1.0),
        (2.0, 1.0, 0.5),
        (1.0, 1.0, 0.5),
        (2.0, 1.5, 0.5),
    ] {
        tried.push((
            format!("fields {n}/{d}/{p}"),
            base.with_fields(FieldWeights::new(n, d, p)),
        ));
    }
    tried.push(("join words".into(), base.with_join_words(true)));
    tried.push((
        "snowball + join words".into(),
        base.with_stemming(Stemming::Snowball).with_join_words(true),
    ));
    tried.push(("split needs".into(), base.with_split_needs(true)));
    let snowball = base.with_stemming(Stemming::Snowball);
    tried.push((
        "snowball + fields 1/1/0.5".into(),
        snowball.with_fields(FieldWeights::new(1.0, 1.0, 0.5)),
    ));
    tried.push((
        "snowball + fields 1/1/0.5 + join words".into(),
        snowball
            .with_fields(FieldWeights::new(1.0, 1.0, 0.5))
            .with_join_words(true),
    ));
    tried.push((
        "snowball + fields 1/1/0.5 + join words + k3 1.2".into(),
        snowball
            .with_fields(FieldWeights::new(1.0, 1.0, 0.5))
            .with_join_words(true)
            .with_query_k3(1.2),
    ));
    tried.push((
        "snowball + join words + k3 1.2".into(),
        snowball.with_join_words(true).with_query_k3(1.2),
    ));
    if let Ok(extra) = std::env::var("SWEEP_ONLY") {
        tried.retain(|(label, _)| label.contains(&extra) || label == "method" || label == "plain");
    }
    println!("| settings | BFCL R@5 | MCP R@5 | MCP all-needs@5 | mix: BFCL R@5 | mix: MCP R@5 |");
    println!("|---|---|---|---|---|---|");
    for (label, settings) in tried {
        let bfcl_index = corpus::index_with(&bfcl.tools, settings);
        let b = corpus::evaluate(&bfcl_index, &bfcl.tools, &bfcl_dev);
        let mcp_index = mcp_corpus::index_with(&mcp.tools, settings);
        let m = mcp_corpus::evaluate(&mcp_index, &mcp_dev);
        let index = mixed_index(settings, &bfcl.tools, &mcp.tools, &distractors);
        let mb = corpus::evaluate(&index, &bfcl.tools, &bfcl_dev);
        let mm = mcp_corpus::evaluate(&index, &mcp_dev);
        println!(
            "| {label} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} |",
            b.r5, m.r5, m.all_needs5, mb.r5, mm.r5
        );
    }
}
