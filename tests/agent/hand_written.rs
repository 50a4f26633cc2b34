//! The hand-written `CalculatorTool` of seeds/002 in an agent: the model's bad arguments come
//! back as one error listing every problem, and the model corrects itself.

use agent_toolkit::model::Role;
use agent_toolkit::prelude::*;
use agent_toolkit::{
    ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use serde_json::json;

use super::calculator::CalculatorTool;

#[tokio::test]
async fn the_model_sees_every_problem_and_corrects_its_call() {
    let kit = Toolkit::builder().register(CalculatorTool).build().unwrap();
    let model = std::sync::Arc::new(
        ScriptedModel::new([ScriptedTurn::call(
            "calculator",
            json!({"a": "15", "b": 23, "operation": "times"}),
        )])
        .then_expect(
            |req| {
                let last = req.messages.last().filter(|m| m.role() == Role::Tool);
                let text = last.map(|m| m.content()).unwrap_or_default();
                (text
                    == "Error: invalid arguments for tool `calculator`: \
                        argument `a`: \"15\" is not of type \"number\"; \
                        argument `operation`: \"times\" is not one of \"add\", \"sub\", \"mul\" or \"div\"; \
                        a valid call: {\"a\": 1, \"b\": 1, \"operation\": \"add\"}")
                    .then_some(())
                    .ok_or(format!("the model did not get the whole error: {text:?}"))
            },
            ScriptedTurn::call("calculator", json!({"a": 15, "b": 23, "operation": "mul"})),
        )
        .then_expect(
            |req| match req.messages.last() {
                Some(m) if m.role() == Role::Tool && m.content() == "345" => Ok(()),
                other => Err(format!("no product: {other:?}")),
            },
            ScriptedTurn::text("15 × 23 = 345"),
        ),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .build()
        .unwrap();
    assert_eq!(
        agent.run("What is 15 * 23?").await.unwrap(),
        "15 × 23 = 345"
    );
    assert_eq!(model.remaining(), 0);
}
