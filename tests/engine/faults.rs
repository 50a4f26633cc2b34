//! Faults a toolkit must survive, beyond those covered per feature.

use std::sync::Arc;

use agent_toolkit::prelude::*;

use super::call;
use super::tools::*;

#[tokio::test]
async fn a_50_mb_output_is_cut_to_the_limit_with_a_marker() {
    let probe = Arc::new(Probe::default());
    let kit = kit(&probe).build().unwrap();
    let r = call(&kit, "big", r#"{"bytes": 52428800}"#).await;
    let text = r.model_text();
    assert!(text.len() < (1 << 20) + 200, "{}", text.len());
    assert!(text.ends_with("[output truncated: 52428800 bytes in all, the first 1048576 shown]"));

    let kit = kit_with_limit(&probe, 100);
    let r = call(&kit, "big", r#"{"bytes": 5000}"#).await;
    assert_eq!(
        r.model_text(),
        format!(
            "{}\n[output truncated: 5000 bytes in all, the first 100 shown]",
            "x".repeat(100)
        )
    );
    let r = call(&kit, "big", r#"{"bytes": 100}"#).await;
    assert_eq!(r.model_text().len(), 100, "at the limit: untouched");
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
        out.model_text()
            .starts_with("é\n[output truncated: 10 bytes in all, the first 2 shown]"),
        "{}",
        out.model_text()
    );
}
