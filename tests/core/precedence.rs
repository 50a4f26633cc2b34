//! One test per row of the precedence rule, plus the hidden-argument policies and the
//! context layers.

use agent_toolkit::ReActAgent;
use agent_toolkit::error::ToolErrorKind;
use agent_toolkit::prelude::*;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use agent_toolkit::toolkit::HiddenArgs;

use super::fixtures::*;
use super::{call, err, ok};

fn echo_kit() -> Toolkit {
    Toolkit::builder()
        .register(Echo)
        .preset("secret", "s3")
        .build()
        .unwrap()
}

#[tokio::test]
async fn row1_the_models_value_is_used_for_visible_parameters() {
    let r = call(
        &echo_kit(),
        "echo",
        r#"{"a": "x", "bee": 5, "c": 9, "d": true}"#,
    )
    .await;
    assert_eq!(ok(&r), "a=x b=Some(5) c=9 d=true secret=s3");
}

#[tokio::test]
async fn row1_the_models_value_beats_a_default_arg() {
    let kit = Toolkit::builder()
        .register(Echo)
        .preset("secret", "s")
        .default_arg("c", 100)
        .build()
        .unwrap();
    assert_eq!(
        ok(&call(&kit, "echo", r#"{"a": "x", "c": 1}"#).await),
        "a=x b=None c=1 d=false secret=s"
    );
}

#[tokio::test]
async fn row2_registration_values_fill_what_the_model_left_out() {
    let kit = Toolkit::builder()
        .register(Echo)
        .preset("secret", "s")
        .default_arg("c", 100)
        .default_arg("a", "from-default-arg")
        .build()
        .unwrap();
    // default_arg beats #[arg(default)] (row 2 before row 4) and satisfies a required param.
    assert_eq!(
        ok(&call(&kit, "echo", "{}").await),
        "a=from-default-arg b=None c=100 d=false secret=s"
    );
    // It stays visible, no longer required, and the schema shows the default.
    let params = kit.definition("echo").unwrap().parameters().clone();
    assert_eq!(params["properties"]["c"]["default"], 100);
    assert!(params.get("required").is_none(), "{params}");
}

#[tokio::test]
async fn row2_a_preset_on_a_visible_parameter_hides_it() {
    let kit = Toolkit::builder()
        .register(Echo)
        .preset("secret", "s")
        .preset("bee", 42)
        .build()
        .unwrap();
    let params = kit.definition("echo").unwrap().parameters().to_string();
    assert!(!params.contains("bee"), "{params}");
    assert_eq!(
        ok(&call(&kit, "echo", r#"{"a": "x"}"#).await),
        "a=x b=Some(42) c=7 d=false secret=s"
    );
    let r = call(&kit, "echo", r#"{"a": "x", "bee": 1}"#).await;
    assert_eq!(err(&r).kind(), ToolErrorKind::HiddenArgument);
}

#[tokio::test]
async fn row3_context_is_looked_up_call_then_agent_then_toolkit() {
    let kit = toolkit();
    // The toolkit's value only.
    let r = kit
        .call(ToolCall::new("c1", "whoami", "{}"), &ToolContext::new())
        .await;
    assert_eq!(ok(&r), "toolkit-user via whoami#c1");
    // An agent's value beats the toolkit's: the tool's output is the run's answer.
    let model = ScriptedModel::new([ScriptedTurn::call("whoami", serde_json::json!({}))]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&kit)
        .context(User {
            name: "agent-user".into(),
        })
        .return_directly("whoami")
        .build()
        .unwrap();
    let answer = agent.run("who am I?").await.unwrap();
    assert!(answer.starts_with("agent-user via whoami#"), "{answer}");
    // A call's value beats the toolkit's (and an agent's: see the context module's tests).
    let ctx = ToolContext::new().with(User {
        name: "call-user".into(),
    });
    let r = kit.call(ToolCall::new("c3", "whoami", "{}"), &ctx).await;
    assert_eq!(ok(&r), "call-user via whoami#c3");
}

#[tokio::test]
async fn row3_optional_and_custom_extractors() {
    let kit = Toolkit::builder().register(TenantOf).build().unwrap();
    let ctx = ToolContext::new().with(Session {
        tenant: "acme".into(),
    });
    let r = kit.call(ToolCall::new("1", "tenant_of", "{}"), &ctx).await;
    assert_eq!(ok(&r), ":acme", "Option<Ctx<User>> is None when absent");
}

#[tokio::test]
async fn row4_defaults_and_options_fill_absent_visible_parameters() {
    let r = call(&echo_kit(), "echo", r#"{"a": "x"}"#).await;
    assert_eq!(ok(&r), "a=x b=None c=7 d=false secret=s3");
    // An explicit null for a parameter the model may omit means omitted (OpenAI strict mode
    // sends that).
    let r = call(
        &echo_kit(),
        "echo",
        r#"{"a": "x", "bee": null, "c": null, "d": null}"#,
    )
    .await;
    assert_eq!(ok(&r), "a=x b=None c=7 d=false secret=s3");
}

#[tokio::test]
async fn row5_a_missing_visible_parameter_is_a_model_visible_error() {
    let r = call(&echo_kit(), "echo", r#"{"c": 1}"#).await;
    let e = err(&r);
    assert_eq!(e.kind(), ToolErrorKind::InvalidArguments);
    assert!(
        e.message().contains("missing required argument `a`"),
        "{}",
        e.message()
    );
    // null is not a value for a required String.
    let r = call(&echo_kit(), "echo", r#"{"a": null}"#).await;
    assert!(
        err(&r)
            .message()
            .contains("argument `a`: invalid type: null"),
        "{}",
        err(&r).message()
    );
}

#[tokio::test]
async fn row5_missing_context_is_a_configuration_error_naming_the_parameter_and_type() {
    let kit = Toolkit::builder().register(Whoami).build().unwrap();
    let r = call(&kit, "whoami", "{}").await;
    let e = err(&r);
    assert_eq!(e.kind(), ToolErrorKind::MissingContext);
    // The model hears that the tool is misconfigured, not the internals...
    assert!(!e.message().contains("User"), "{}", e.message());
    // ...the operator gets the parameter, its type and the fix.
    let detail = e.source().expect("operator detail").to_string();
    assert!(detail.contains("`user: Ctx<User>`"), "{detail}");
    assert!(detail.contains("ToolkitBuilder::context"), "{detail}");
}

#[tokio::test]
async fn hidden_arguments_are_rejected_by_default() {
    let kit = toolkit();
    for args in [
        r#"{"location": "x", "api_key": "stolen"}"#,
        r#"{"location": "x", "user": {"name": "mallory"}}"#,
    ] {
        let r = call(&kit, "get_weather", args).await;
        let e = err(&r);
        assert_eq!(e.kind(), ToolErrorKind::HiddenArgument, "{args}");
        assert!(
            e.message().contains("set by the application"),
            "{}",
            e.message()
        );
    }
}

#[tokio::test]
async fn hidden_arguments_can_be_ignored_instead() {
    let kit = Toolkit::builder()
        .hidden_args(HiddenArgs::Ignore)
        .register(Echo)
        .preset("secret", "real")
        .build()
        .unwrap();
    let r = call(&kit, "echo", r#"{"a": "x", "secret": "stolen"}"#).await;
    assert_eq!(ok(&r), "a=x b=None c=7 d=false secret=real");
}

#[tokio::test]
async fn the_same_fn_registered_twice_keeps_its_own_presets() {
    let kit = Toolkit::builder()
        .register_as("echo_one", Echo)
        .preset("secret", "one")
        .register_as("echo_two", Echo)
        .preset("secret", "two")
        .build()
        .unwrap();
    assert!(ok(&call(&kit, "echo_one", r#"{"a": "x"}"#).await).ends_with("secret=one"));
    assert!(ok(&call(&kit, "echo_two", r#"{"a": "x"}"#).await).ends_with("secret=two"));
}
