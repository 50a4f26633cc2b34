//! Faults a toolkit must survive, beyond those covered per feature.

use std::sync::Arc;

use agent_toolkit::prelude::*;
use agent_toolkit::toolkit::DEFAULT_MAX_OUTPUT_BYTES;

use super::call;
use super::tools::*;

#[tokio::test]
async fn a_50_mb_output_is_cut_to_the_budget_head_and_tail() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let r = call(&kit, "big", r#"{"bytes": 52428800}"#).await;
    let text = r.model_text();
    assert!(text.len() <= DEFAULT_MAX_OUTPUT_BYTES, "{}", text.len());
    assert!(
        text.starts_with("xxxx") && text.ends_with("xxxx"),
        "head and tail kept"
    );
    assert!(text.contains(" of 52428800 bytes cut here to fit the result budget; to see them, call the tool again asking for less"), "{text:.200}");

    let kit = kit_with_limit(&probe, 400);
    let r = call(&kit, "big", r#"{"bytes": 5000}"#).await;
    let text = r.model_text();
    assert!(text.len() <= 400, "{}", text.len());
    let note = text.lines().find(|l| l.starts_with("[…")).expect("a note");
    let kept = text.len() - note.len() - 2;
    assert!(
        note.contains(&format!("{} of 5000 bytes cut", 5000 - kept)),
        "{note}"
    );
    let r = call(&kit, "big", r#"{"bytes": 400}"#).await;
    assert_eq!(r.model_text().len(), 400, "at the limit: untouched");
}

fn kit_with_limit(probe: &Arc<Probe>, limit: usize) -> Toolkit {
    kit(probe).max_output_bytes(limit).build().unwrap()
}

/// Five two-byte characters.
#[tool]
fn accents() -> &'static str {
    "ééééé"
}

#[tokio::test]
async fn truncation_respects_character_boundaries() {
    let kit = Toolkit::builder()
        .register(Accents)
        .max_output_bytes(3)
        .build()
        .unwrap();
    let out = call(&kit, "accents", "{}").await;
    assert!(
        out.model_text().starts_with("é\n[… 8 of 10 bytes cut here"),
        "{}",
        out.model_text()
    );
}

/// A long listing, with a budget of its own.
#[tool(read_only, max_output_bytes = 300)]
fn listing(lines: u32) -> String {
    (0..lines).map(|i| format!("entry {i}\n")).collect()
}

#[tokio::test]
async fn a_tool_has_its_own_budget_and_a_registration_overrides_both() {
    let kit = Toolkit::builder()
        .register(Listing)
        .register_as("listing_all", Listing)
        .tool_max_output_bytes(100_000)
        .max_output_bytes(50)
        .build()
        .unwrap();
    let own = call(&kit, "listing", r#"{"lines": 1000}"#).await;
    let text = own.model_text();
    assert!(text.len() <= 300 && text.len() > 200, "{}", text.len());
    assert!(
        text.starts_with("entry 0\n") && text.ends_with("entry 999\n"),
        "{text}"
    );
    let all = call(&kit, "listing_all", r#"{"lines": 1000}"#).await;
    assert!(
        !all.model_text().contains("bytes cut"),
        "the registration's budget wins"
    );
}
