//! A `#[tool]` function's unit enum parameter, as the `dialect` docs describe it.

use agent_toolkit::prelude::*;

/// Speed of a run.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Speed {
    Fast,
    Slow,
}

/// Run at a speed.
#[tool]
fn run_at(speed: Speed) -> &'static str {
    match speed {
        Speed::Fast => "fast",
        Speed::Slow => "slow",
    }
}

/// What the `dialect` docs say of a `#[tool]` function's enum parameter: the schema lists the
/// variants as strings, serde reads the value, a value that is no variant is refused naming
/// them, and serde's map spelling of a unit variant is accepted as the same value.
#[tokio::test]
async fn a_unit_enum_parameter_is_read_by_serde() {
    let kit = Toolkit::builder().register(RunAt).build().unwrap();
    let schema = kit.definitions()[0].parameters().to_string();
    assert!(
        schema.contains(r#""fast""#) && schema.contains(r#""slow""#),
        "{schema}"
    );
    let call = |args: serde_json::Value| ToolCall::json("c", "run_at", args);
    let ctx = ToolContext::new();
    assert_eq!(
        kit.call(call(serde_json::json!({"speed": "fast"})), &ctx)
            .await
            .model_text(),
        "fast"
    );
    let refused = kit
        .call(call(serde_json::json!({"speed": "medium"})), &ctx)
        .await;
    assert!(refused.is_error(), "{refused}");
    assert!(
        refused.model_text().contains("`fast`") && refused.model_text().contains("`slow`"),
        "{refused}"
    );
    assert_eq!(
        kit.call(call(serde_json::json!({"speed": {"fast": null}})), &ctx)
            .await
            .model_text(),
        "fast"
    );
}
