//! Building a toolkit: fail-fast configuration errors, all reported at once; name maps.

use agent_toolkit::Dialect;
use agent_toolkit::error::{ConfigError, ToolErrorKind};
use agent_toolkit::prelude::*;

use super::fixtures::*;
use super::{call, ok};

#[test]
fn build_reports_every_configuration_error_at_once() {
    let e = Toolkit::builder()
        .preset("orphan", 1) // before any register
        .group("weather", "Weather")
        .group("weather", "again")
        .register(GetWeather) // api_key unbound
        .register(Echo)
        .preset("secret", "s")
        .preset("nope", 1) // no such parameter
        .register(Echo) // duplicate name
        .preset("secret", "s")
        .register(Whoami)
        .preset("user", "x") // a #[ctx] parameter
        .register(SaveAddress)
        .in_group("missing") // undeclared group
        .register_as("echo2", Echo)
        .default_arg("secret", "x") // default_arg on a #[preset]
        .default_arg("c", "not a number") // wrong type
        .build()
        .unwrap_err();
    let msgs: Vec<String> = e.errors.iter().map(|e| e.to_string()).collect();
    let all = msgs.join("\n");
    let expect = [
        "preset(..) was called before any `.register(..)`",
        "the group `weather` is declared twice",
        "tool `get_weather`: the #[preset] parameter `api_key` (String) is not bound; add `.preset(\"api_key\", value)`",
        "preset(\"nope\", ..): no tool of this registration (`echo`) has a parameter `nope`; its parameters are `a`, `bee`, `c`, `d`, `secret`",
        "two tools are named `echo`",
        "preset(\"user\", ..) on tool `whoami`: it is a #[ctx] parameter",
        "tool `store_address` is in group `missing`, which is not declared",
        "default_arg(\"secret\", ..) on tool `echo2`: it is a #[preset] parameter; bind it with .preset(..)",
        "default_arg(\"c\", ..) on tool `echo2`: the value \"not a number\" does not fit the parameter type `i64`: invalid type: string \"not a number\", expected i64",
        "tool `echo2`: the #[preset] parameter `secret` (String) is not bound",
    ];
    for want in expect {
        assert!(all.contains(want), "missing {want:?} in:\n{all}");
    }
    assert_eq!(e.errors.len(), expect.len(), "{all}");
    assert!(matches!(
        e.errors[0],
        ConfigError::NothingRegistered("preset")
    ));
}

#[test]
fn a_preset_of_the_wrong_type_is_refused_at_build() {
    let e = Toolkit::builder()
        .register(Echo)
        .preset("secret", 5)
        .build()
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("the value 5 does not fit the parameter type `String`"),
        "{e}"
    );
}

/// A tool with a name that providers refuse.
#[tool(name = "files.read-v2")]
fn read_file() -> &'static str {
    "contents"
}

#[tokio::test]
async fn names_are_sanitised_per_dialect_and_mapped_back() {
    let kit = Toolkit::builder().register(ReadFile).build().unwrap();
    let openai = kit.definitions_for(Dialect::OpenAi);
    let wire = openai[0]["function"]["name"].as_str().unwrap().to_string();
    assert_eq!(wire, "files_read-v2");
    assert_eq!(
        kit.original_name(Dialect::OpenAi, &wire),
        Some("files.read-v2")
    );
    // The model calls the sanitised name; the toolkit finds the tool.
    let r = kit
        .call(ToolCall::new("1", wire.clone(), "{}"), &ToolContext::new())
        .await;
    assert_eq!(ok(&r), "contents");
    assert_eq!(r.name, wire, "the result echoes the name the model used");
    // MCP allows dots: the name is kept.
    assert_eq!(
        kit.definitions_for(Dialect::Mcp)[0]["name"],
        "files.read-v2"
    );
}

#[tokio::test]
async fn unknown_tools_list_what_is_available() {
    let kit = Toolkit::builder().register(Ping).build().unwrap();
    let r = call(&kit, "pnig", "{}").await;
    let e = r.error().unwrap();
    assert_eq!(e.kind(), ToolErrorKind::UnknownTool);
    assert_eq!(
        e.message(),
        "there is no tool named `pnig`; available tools: ping"
    );
    assert_eq!(ok(&call(&kit, "ping", "").await), "pong");
}
