//! Parser tests: what is a call, what is prose, and what is refused.

use serde_json::json;

use super::error::TextCallError;
use super::parse::{ParsedReply, parse_tool_calls};
use super::syntax::TextCallFormat;
use crate::tool::ToolDefinition;

fn tools() -> Vec<ToolDefinition> {
    let object = json!({"type": "object"});
    vec![
        ToolDefinition::new("get_weather", "Weather of a city.", object.clone()),
        ToolDefinition::new("search", "Search the web.", object),
    ]
}

fn json(text: &str) -> Result<ParsedReply, TextCallError> {
    parse_tool_calls(text, TextCallFormat::Json, &tools())
}

fn xml(text: &str) -> Result<ParsedReply, TextCallError> {
    parse_tool_calls(text, TextCallFormat::Xml, &tools())
}

fn calls(reply: &ParsedReply) -> Vec<(&str, &str, &str)> {
    reply
        .calls
        .iter()
        .map(|c| (&*c.id, c.name.as_str(), c.arguments.as_str()))
        .collect()
}

fn malformed(error: TextCallError) -> String {
    match error {
        TextCallError::Malformed(message) => message,
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn json_call_in_prose() {
    let reply = json(
        r#"Let me look that up. {"tool_calls": [{"id": "w1", "name": "get_weather", "parameters": {"city": "Paris"}}]} One moment."#,
    )
    .unwrap();
    assert_eq!(
        calls(&reply),
        [("w1", "get_weather", r#"{"city":"Paris"}"#)]
    );
    assert_eq!(reply.text, "Let me look that up. One moment.");
}

#[test]
fn json_call_in_fence_leaves_no_empty_fence() {
    let reply = json(
        "I'll check.\n\n```json\n{\n  \"tool_calls\": [\n    {\"name\": \"search\", \"parameters\": {\"q\": \"rust\"}}\n  ]\n}\n```\n",
    )
    .unwrap();
    assert_eq!(calls(&reply), [("call_1", "search", r#"{"q":"rust"}"#)]);
    assert_eq!(reply.text, "I'll check.");
}

#[test]
fn json_several_calls_without_ids() {
    let reply = json(
        r#"{"tool_calls": [{"name": "get_weather", "parameters": {"city": "Oslo"}}, {"name": "search", "parameters": {}}, {"name": "search"}]}"#,
    )
    .unwrap();
    assert_eq!(
        calls(&reply),
        [
            ("call_1", "get_weather", r#"{"city":"Oslo"}"#),
            ("call_2", "search", "{}"),
            ("call_3", "search", "{}"),
        ]
    );
    assert_eq!(reply.text, "");
}

#[test]
fn json_repeated_id_is_replaced() {
    let reply =
        json(r#"{"tool_calls": [{"id": "a", "name": "search"}, {"id": "a", "name": "search"}]}"#)
            .unwrap();
    let ids: Vec<&str> = reply.calls.iter().map(|c| &*c.id).collect();
    assert_eq!(ids, ["a", "call_1"]);
}

#[test]
fn json_nested_braces_and_quotes_in_strings() {
    let reply = json(
        r#"{"tool_calls": [{"name": "search", "parameters": {"q": "a } b { \"tool_calls\": [ c", "filter": {"lang": ["en", "}"]}}}]} done"#,
    )
    .unwrap();
    assert_eq!(reply.calls.len(), 1);
    let args: serde_json::Value = serde_json::from_str(&reply.calls[0].arguments).unwrap();
    assert_eq!(args["q"], r#"a } b { "tool_calls": [ c"#);
    assert_eq!(args["filter"]["lang"][1], "}");
    assert_eq!(reply.text, "done");
}

#[test]
fn json_block_after_unrelated_braces() {
    let reply = json(
        r#"Sets look like {1, 2} and maps like {"a": 1}. {"tool_calls": [{"name": "search", "parameters": {"q": "sets"}}]}"#,
    )
    .unwrap();
    assert_eq!(reply.calls.len(), 1);
    assert_eq!(
        reply.text,
        r#"Sets look like {1, 2} and maps like {"a": 1}."#
    );
}

#[test]
fn json_bad_json_is_refused_with_position() {
    let message = malformed(
        json(r#"{"tool_calls": [{"name": "search", "parameters": {"q": "x"]}]}"#).unwrap_err(),
    );
    assert!(message.contains("not valid JSON"), "{message}");
    assert!(message.contains(r#"near `"#), "{message}");
    assert!(message.contains(r#""q": "x"]"#), "{message}");
}

#[test]
fn json_truncated_block_is_refused() {
    let message =
        malformed(json(r#"Sure. {"tool_calls": [{"name": "search", "parameters": {"#).unwrap_err());
    assert!(message.contains("not valid JSON"), "{message}");
}

#[test]
fn json_marker_outside_an_object_is_refused() {
    let message = malformed(json(r#"Calling: "tool_calls": [{"name": "search"}]"#).unwrap_err());
    assert!(
        message.contains("not inside a complete JSON object"),
        "{message}"
    );
}

#[test]
fn json_missing_name() {
    assert_eq!(
        json(r#"{"tool_calls": [{"name": "search"}, {"parameters": {"q": 1}}]}"#),
        Err(TextCallError::MissingName { call: 2 })
    );
    assert_eq!(
        json(r#"{"tool_calls": [{"name": 7}]}"#),
        Err(TextCallError::MissingName { call: 1 })
    );
}

#[test]
fn json_parameters_not_an_object() {
    let error = json(r#"{"tool_calls": [{"name": "search", "parameters": "rust"}]}"#).unwrap_err();
    assert_eq!(
        error,
        TextCallError::ParametersNotObject {
            call: 1,
            tool: "search".into(),
            found: "a string"
        }
    );
    assert!(error.to_string().contains("must be a JSON object"));
}

#[test]
fn json_unknown_tool() {
    let error = json(r#"{"tool_calls": [{"name": "delete_all", "parameters": {}}]}"#).unwrap_err();
    assert!(matches!(&error, TextCallError::UnknownTool { tool, .. } if tool == "delete_all"));
    let message = error.to_string();
    assert!(message.contains("`delete_all`"), "{message}");
    assert!(message.contains("get_weather, search"), "{message}");
}

#[test]
fn json_call_entry_not_an_object() {
    let message = malformed(json(r#"{"tool_calls": ["search"]}"#).unwrap_err());
    assert!(
        message.contains("tool call #1 must be a JSON object"),
        "{message}"
    );
}

#[test]
fn json_single_call_object_and_arguments_alias() {
    let reply = json(r#"{"tool_call": {"name": "search", "arguments": {"q": "x"}}}"#).unwrap();
    assert_eq!(calls(&reply), [("call_1", "search", r#"{"q":"x"}"#)]);
}

#[test]
fn plain_text_is_an_answer() {
    let text = "The weather in Paris is sunny, 24°C.\n\n```json\n{\"temp\": 24}\n```\n";
    for format in [TextCallFormat::Json, TextCallFormat::Xml] {
        let reply = parse_tool_calls(text, format, &tools()).unwrap();
        assert_eq!(reply.text, text);
        assert!(reply.calls.is_empty());
    }
}

#[test]
fn talking_about_tool_calls_is_not_a_call() {
    let text = "I don't need a tool_call for this, and the tool_calls field is empty. \
                In XML one would write a tool_call element; in JSON, \"tool_calls\" is a \
                list. The answer is 4.";
    for format in [TextCallFormat::Json, TextCallFormat::Xml] {
        let reply = parse_tool_calls(text, format, &tools()).unwrap();
        assert_eq!(reply.text, text);
        assert!(reply.calls.is_empty());
    }
}

/// Models write the forms they were trained on whatever the prompt teaches: every form is read
/// in either format, in the order written.
#[test]
fn every_form_is_read_in_either_format() {
    let reply = "First {\"tool_calls\": [{\"name\": \"search\", \"parameters\": {\"q\": \"a\"}}]}\n\
                 <tool_call name=\"get_weather\"><parameters>{\"city\": \"Oslo\"}</parameters></tool_call>\n\
                 <tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"b\"}}\n</tool_call>\n\
                 ```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n```\nDone.";
    for format in [TextCallFormat::Json, TextCallFormat::Xml] {
        let parsed = parse_tool_calls(reply, format, &tools()).unwrap();
        assert_eq!(
            calls(&parsed),
            [
                ("call_1", "search", r#"{"q":"a"}"#),
                ("call_2", "get_weather", r#"{"city":"Oslo"}"#),
                ("call_3", "search", r#"{"q":"b"}"#),
                ("call_4", "get_weather", r#"{"city":"Rome"}"#),
            ],
            "{format:?}"
        );
        assert_eq!(parsed.text, "First\nDone.", "{format:?}");
    }
}

/// What Qwen2.5-Coder-0.5B writes behind llama.cpp with its own chat template, as seen.
#[test]
fn calls_as_small_models_write_them() {
    let bare = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
    let two = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Berlin\"}}";
    let fenced = "```json\n{\n  \"name\": \"get_weather\",\n  \"arguments\": {\n    \"city\": \"Paris\"\n  }\n}\n```";
    let hermes = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    for (text, cities) in [(bare, 1), (two, 2), (fenced, 1), (hermes, 1)] {
        let parsed = json(text).unwrap();
        assert_eq!(parsed.calls.len(), cities, "{text}");
        assert!(
            parsed.calls.iter().all(|c| c.name == "get_weather"),
            "{text}"
        );
        assert_eq!(parsed.text, "", "{text}");
    }
    // A Hermes call naming a tool that is not offered is refused like any other.
    assert!(matches!(
        json(r#"<tool_call>{"name": "rm", "arguments": {}}</tool_call>"#),
        Err(TextCallError::UnknownTool { call: 1, .. })
    ));
    // seed 002's XML call whose JSON parameters hold a `name` is not a Hermes call.
    let reply =
        xml(r#"<tool_call name="search"><parameters>{"name": "x"}</parameters></tool_call>"#)
            .unwrap();
    assert_eq!(calls(&reply), [("call_1", "search", r#"{"name":"x"}"#)]);
    assert_eq!(
        xml(r#"<tool_call><parameters>{"name": "search"}</parameters></tool_call>"#),
        Err(TextCallError::MissingName { call: 1 })
    );
}

#[test]
fn xml_single_call() {
    let reply = xml(
        r#"Checking. <tool_call id="c9" name="get_weather"><parameters>{"city": "Rome"}</parameters></tool_call>"#,
    )
    .unwrap();
    assert_eq!(calls(&reply), [("c9", "get_weather", r#"{"city":"Rome"}"#)]);
    assert_eq!(reply.text, "Checking.");
}

#[test]
fn xml_multiple_calls_without_ids() {
    let reply = xml(
        "First:\n<tool_call name=\"search\">\n  <parameters>{\"q\": \"a\"}</parameters>\n</tool_call>\n\
         <tool_call name='get_weather'><parameters>\n{\"city\": \"Lima\"}\n</parameters></tool_call>\n\
         <tool_call name=\"search\"/>\nThen I'll summarise.",
    )
    .unwrap();
    assert_eq!(
        calls(&reply),
        [
            ("call_1", "search", r#"{"q":"a"}"#),
            ("call_2", "get_weather", r#"{"city":"Lima"}"#),
            ("call_3", "search", "{}"),
        ]
    );
    assert_eq!(reply.text, "First:\nThen I'll summarise.");
}

#[test]
fn xml_in_fence_and_wrapper() {
    let reply = xml(
        "Sure.\n```xml\n<tool_calls>\n<tool_call name=\"search\"><parameters>{\"q\": \"x\"}</parameters></tool_call>\n</tool_calls>\n```",
    )
    .unwrap();
    assert_eq!(calls(&reply), [("call_1", "search", r#"{"q":"x"}"#)]);
    assert_eq!(reply.text, "Sure.");
}

#[test]
fn xml_parameters_with_closing_tags_in_strings() {
    let reply = xml(
        r#"<tool_call name="search"><parameters>{"q": "</parameters></tool_call> {\"x\"}"}</parameters></tool_call>"#,
    )
    .unwrap();
    let args: serde_json::Value = serde_json::from_str(&reply.calls[0].arguments).unwrap();
    assert_eq!(args["q"], r#"</parameters></tool_call> {"x"}"#);
}

#[test]
fn xml_bad_json() {
    let message = malformed(
        xml(r#"<tool_call name="search"><parameters>{"q": 'x'}</parameters></tool_call>"#)
            .unwrap_err(),
    );
    assert!(
        message.contains("<parameters> of tool call #1 are not valid JSON"),
        "{message}"
    );
}

#[test]
fn xml_missing_name_unknown_tool_and_non_object() {
    assert_eq!(
        xml(r#"<tool_call><parameters>{}</parameters></tool_call>"#),
        Err(TextCallError::MissingName { call: 1 })
    );
    assert!(matches!(
        xml(r#"<tool_call name="rm"><parameters>{}</parameters></tool_call>"#),
        Err(TextCallError::UnknownTool { call: 1, .. })
    ));
    assert!(matches!(
        xml(r#"<tool_call name="search"><parameters>[1]</parameters></tool_call>"#),
        Err(TextCallError::ParametersNotObject {
            found: "an array",
            ..
        })
    ));
}

#[test]
fn xml_unclosed_or_stray_tags() {
    let message = malformed(
        xml(r#"<tool_call name="search"><parameters>{"q": "x"}</parameters>"#).unwrap_err(),
    );
    assert!(message.contains("</tool_call>"), "{message}");
    assert!(message.contains("the end of the reply"), "{message}");
    let message = malformed(xml("done </tool_call>").unwrap_err());
    assert!(message.contains("without an opening"), "{message}");
    let message = malformed(xml(r#"<tool_call name=search>"#).unwrap_err());
    assert!(message.contains("in double quotes"), "{message}");
}

#[test]
fn no_tools_means_any_call_is_unknown() {
    let error = parse_tool_calls(
        r#"{"tool_calls": [{"name": "search"}]}"#,
        TextCallFormat::Json,
        &[],
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("no tool may be called"),
        "{error}"
    );
}

/// Calls of offered tools written with the slips of small models (issue 30) are read.
#[test]
fn calls_with_slips_are_read_leniently() {
    for text in [
        r#"{"name": "search", "arguments": {"q": "rust"}"#,
        r#"{"name": "search", "arguments": {"q": "rust",},}"#,
        r#"{'name': 'search', 'arguments': {'q': 'rust'}}"#,
        "```\n{\"name\": \"search\", \"arguments\": {\"q\": \"rust\"}\n```",
        "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"rust\"}\n</tool_call>",
        r#"{"tool_calls": [{"name": "search", "parameters": {"q": "rust"}},]"#,
    ] {
        let reply = json(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            calls(&reply),
            [("call_1", "search", r#"{"q":"rust"}"#)],
            "{text}"
        );
        assert_eq!(reply.text, "", "{text}");
    }
    let reply =
        json("I'll search.\n{\"name\": \"search\", \"arguments\": {\"safe\": True, \"lang\": None} Then I answer.")
            .unwrap();
    assert_eq!(
        calls(&reply),
        [("call_1", "search", r#"{"safe":true,"lang":null}"#)]
    );
    assert_eq!(reply.text, "I'll search.\nThen I answer.");
}

/// Lenient reading is for calls of offered tools only, and never for code or data.
#[test]
fn lenient_reading_makes_no_call_of_prose_code_or_data() {
    for text in [
        r#"{"name": "delete_all", "arguments": {"path": "/"}"#,
        r#"{"temperature": 21, 'unit': 'C'"#,
        "The set {1, 2} and {a: b}.",
        "```python\nx = {'name': 'search', 'arguments': {'q': 'rust'}}\n```",
        "Call it as f({'name': 'search', 'arguments': {'q': 'rust'}})",
        r#"{"name": "search", "description": "Search the web.", "parameters": {}}"#,
    ] {
        let reply = json(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(reply.calls.is_empty(), "{text}: {:?}", reply.calls);
        assert_eq!(reply.text, text);
    }
}

/// An attempted call of an offered tool that cannot be read even leniently is refused with
/// the reason and the shape to write, never taken for the answer.
#[test]
fn an_unreadable_attempted_call_is_refused() {
    for (text, why) in [
        (r#"{"name": "search", "arguments": {"q": rust}}"#, "`rust`"),
        (
            r#"Searching. {"name": "search", "arguments": {"q":"#,
            "before the call is complete",
        ),
        (
            r#"{'name': 'search', 'arguments': {'q': 'ru"#,
            "is not closed",
        ),
    ] {
        let message = malformed(json(text).unwrap_err());
        assert!(message.contains("could not be read"), "{message}");
        assert!(message.contains(why), "{message}");
        assert!(
            message.contains(r#"write it as {"name": "search", "arguments": {...}}"#),
            "{message}"
        );
    }
    let message = malformed(
        json("<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": }}\n</tool_call>")
            .unwrap_err(),
    );
    assert!(
        message.contains("tool call #1 could not be read"),
        "{message}"
    );
}

/// Arguments that are a copy of the tool's schema are no arguments, so that validation names
/// the missing ones; only when they really look like a schema the tool does not take.
#[test]
fn a_copied_schema_is_no_arguments() {
    let balance = ToolDefinition::new(
        "account_balance",
        "Balance.",
        json!({"type": "object", "properties": {"account": {"type": "string"}}, "required": ["account"]}),
    );
    let record = ToolDefinition::new(
        "create_record",
        "Record.",
        json!({"type": "object", "properties": {"type": {"type": "string"}, "properties": {}}}),
    );
    let tools = [balance, record];
    let parse = |text: &str| parse_tool_calls(text, TextCallFormat::Json, &tools).unwrap();
    let copied = r#"{"name": "account_balance", "arguments": {"type": "object", "properties": {"account": {"type": "string"}}, "required": ["account"]}"#;
    assert_eq!(calls(&parse(copied)), [("call_1", "account_balance", "{}")]);
    for (text, arguments) in [
        (
            r#"{"name": "account_balance", "arguments": {"type": "object", "account": "x"}}"#,
            r#"{"type":"object","account":"x"}"#,
        ),
        (
            r#"{"name": "create_record", "arguments": {"type": "object", "properties": {"a": 1}}}"#,
            r#"{"type":"object","properties":{"a":1}}"#,
        ),
    ] {
        assert_eq!(calls(&parse(text))[0].2, arguments, "{text}");
    }
    // A tool that declares no properties may take anything.
    let reply =
        json(r#"{"name": "search", "arguments": {"type": "object", "properties": {}}}"#).unwrap();
    assert_eq!(
        calls(&reply),
        [("call_1", "search", r#"{"type":"object","properties":{}}"#)]
    );
}
