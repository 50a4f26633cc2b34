//! The one-pass argument path of generated tools must give exactly the results of the
//! thorough path: same values, same errors. The same tool is run both ways over many argument
//! shapes — once as generated (fast path first), once behind a wrapper that makes the toolkit
//! resolve every argument up front (thorough path only).

use agent_toolkit::prelude::*;
use agent_toolkit::{
    AgentTool,
    tool::{ToolArgs, ToolFuture, ToolSpec},
    toolkit::{HiddenArgs, UnknownArgs},
};

use super::fixtures::*;

/// Forwards to the generated tool but declares that it does not parse its own arguments.
struct Thorough<T>(T);

impl<T: AgentTool> AgentTool for Thorough<T> {
    fn spec(&self) -> ToolSpec {
        // Test support in the macros' hidden runtime: the same spec, resolved by the toolkit.
        agent_toolkit::__private_v0_1_0::thorough(self.0.spec())
    }
    fn call(&self, args: ToolArgs) -> ToolFuture {
        self.0.call(args)
    }
}

const CASES: &[&str] = &[
    r#"{"a": "x"}"#,
    r#"{"a": "x", "bee": 5, "c": 9, "d": true}"#,
    r#"{"a": "x", "bee": null, "c": null, "d": null}"#,
    r#"{"bee": 1}"#,
    r#"{"a": null}"#,
    r#"{"a": 5}"#,
    r#"{"a": "x", "c": "nine"}"#,
    r#"{"a": "x", "secret": "mine"}"#,
    r#"{"a": "x", "zzz": 1}"#,
    r#"{"a": "x", "a": "y"}"#,
    r#"{"a": "x\u0041\n", "bee": -3}"#,
    r#"{"\u0061": "escaped key"}"#,
    r#"{}"#,
    "",
    "  ",
    "[]",
    "null",
    r#"{"a": "x"} {"#,
    r#"{"a": "x""#,
    r#"{"a": "x", "c": 1e3}"#,
    r#"{"a": "x", "c": 9223372036854775808}"#,
    // Quoted scalars: coerced on both paths, or refused on both.
    r#"{"a": "x", "bee": "5", "c": "-9", "d": "true"}"#,
    r#"{"a": "x", "c": "9.0"}"#,
    r#"{"a": "x", "c": "9", "zzz": 1}"#,
    r#"{"a": "x", "c": "9", "secret": "mine"}"#,
];

async fn run_both(builder: impl Fn() -> agent_toolkit::toolkit::ToolkitBuilder) {
    let fast = builder()
        .register(Echo)
        .preset("secret", "s")
        .default_arg("c", 70)
        .build()
        .unwrap();
    let slow = builder()
        .register_as("echo", Thorough(Echo))
        .preset("secret", "s")
        .default_arg("c", 70)
        .build()
        .unwrap();
    for args in CASES {
        let a = super::call(&fast, "echo", args).await;
        let b = super::call(&slow, "echo", args).await;
        assert_eq!(a.model_text(), b.model_text(), "diverged on {args:?}");
        assert_eq!(
            a.error().map(|e| e.kind()),
            b.error().map(|e| e.kind()),
            "{args:?}"
        );
    }
}

#[tokio::test]
async fn the_fast_and_thorough_paths_agree() {
    run_both(Toolkit::builder).await;
    run_both(|| {
        Toolkit::builder()
            .unknown_args(UnknownArgs::Ignore)
            .hidden_args(HiddenArgs::Ignore)
    })
    .await;
}

#[tokio::test]
async fn nested_types_and_values_that_accept_null_agree() {
    for (tool, args) in [
        (
            "store_address",
            r#"{"address": {"street": "s", "city": "c"}, "tags": ["t"]}"#,
        ),
        (
            "store_address",
            r#"{"address": {"street": "s", "city": 1}, "tags": []}"#,
        ),
        ("any_json", r#"{"value": null}"#),
        ("any_json", r#"{"value": {"deep": [1, {"x": null}]}}"#),
        ("any_json", "{}"),
    ] {
        let fast = Toolkit::builder()
            .register(SaveAddress)
            .register(AnyJson)
            .build()
            .unwrap();
        let slow = Toolkit::builder()
            .register_as("store_address", Thorough(SaveAddress))
            .register_as("any_json", Thorough(AnyJson))
            .build()
            .unwrap();
        let a = super::call(&fast, tool, args).await;
        let b = super::call(&slow, tool, args).await;
        assert_eq!(
            a.model_text(),
            b.model_text(),
            "diverged on {tool} {args:?}"
        );
    }
}
