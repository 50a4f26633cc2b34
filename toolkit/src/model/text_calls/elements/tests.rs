//! Element parameters: reading, typing by schema, and what is refused.

use serde_json::{Value, json};

use crate::model::text_calls::error::TextCallError;
use crate::model::text_calls::parse::parse_tool_calls;
use crate::model::text_calls::syntax::TextCallFormat;
use crate::tool::ToolDefinition;

/// The arguments of one call of a tool `t` with `schema`, written with element parameters.
fn args(schema: Value, parameters: &str) -> Value {
    let tools = [ToolDefinition::new("t", "A tool.", schema)];
    let text = format!(r#"<tool_call name="t"><parameters>{parameters}</parameters></tool_call>"#);
    let reply = parse_tool_calls(&text, TextCallFormat::Xml, &tools)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(reply.calls.len(), 1);
    serde_json::from_str(&reply.calls[0].arguments).expect("arguments are JSON")
}

fn refused(parameters: &str) -> String {
    let tools = [ToolDefinition::new(
        "t",
        "A tool.",
        json!({"type": "object"}),
    )];
    let text = format!(r#"<tool_call name="t"><parameters>{parameters}</parameters></tool_call>"#);
    match parse_tool_calls(&text, TextCallFormat::Xml, &tools) {
        Err(TextCallError::Malformed(message)) => message,
        other => panic!("expected Malformed, got {other:?}"),
    }
}

fn props(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

#[test]
fn the_002_calculator_call() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "number"},
            "b": {"type": "number"},
            "operation": {"type": "string", "enum": ["add", "sub", "mul", "div"]}
        },
        "required": ["a", "b", "operation"]
    });
    let tools = [ToolDefinition::new("calculator", "Arithmetic.", schema)];
    let text = "<tool_call id=\"call_1\" name=\"calculator\">\n  <parameters>\n    <a>10</a>\n    \
                <b>5</b>\n    <operation>add</operation>\n  </parameters>\n</tool_call>";
    let reply = parse_tool_calls(text, TextCallFormat::Xml, &tools).unwrap();
    assert_eq!(reply.text, "");
    assert_eq!(&*reply.calls[0].id, "call_1");
    assert_eq!(reply.calls[0].name, "calculator");
    assert_eq!(
        reply.calls[0].arguments,
        r#"{"a":10,"b":5,"operation":"add"}"#
    );
}

#[test]
fn scalars_are_typed_by_the_schema() {
    let schema = props(json!({
        "int": {"type": "integer"},
        "num": {"type": "number"},
        "frac": {"type": "number"},
        "whole": {"type": "integer"},
        "flag": {"type": "boolean"},
        "shout": {"type": "boolean"},
        "code": {"type": "string"},
        "zip": {"type": "string"},
        "word": {"type": "string"},
        "big": {"type": "integer", "minimum": 0, "maximum": u64::MAX}
    }));
    let out = args(
        schema,
        "<int>10</int><num>10</num><frac>-2.5</frac><whole>3.0</whole><flag>true</flag>\
         <shout>FALSE</shout><code>007</code><zip>12345</zip><word>true</word>\
         <big>18446744073709551615</big>",
    );
    assert_eq!(
        out,
        json!({"int": 10, "num": 10, "frac": -2.5, "whole": 3, "flag": true, "shout": false,
               "code": "007", "zip": "12345", "word": "true", "big": u64::MAX})
    );
    assert!(out["int"].is_i64());
    assert_eq!(out["frac"].as_f64(), Some(-2.5));
}

#[test]
fn text_the_schema_cannot_take_stays_text_for_validation_to_report() {
    let out = args(
        props(json!({"n": {"type": "integer"}, "b": {"type": "boolean"}, "x": {"type": "number"}})),
        "<n>ten</n><b>yes</b><x>NaN</x>",
    );
    assert_eq!(out, json!({"n": "ten", "b": "yes", "x": "NaN"}));
}

#[test]
fn enums_refs_and_nullable_unions() {
    let schema = json!({
        "type": "object",
        "properties": {
            "unit": {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}]},
            "none": {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}]},
            "level": {"enum": [1, 2, 3]},
            "note": {"type": ["string", "null"]},
            "count": {"type": ["integer", "null"]},
            "gone": {"type": ["integer", "null"]},
            "id": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "label": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "mode": {"oneOf": [{"const": "fast"}, {"const": "slow"}]}
        },
        "$defs": {"Unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}
    });
    let out = args(
        schema,
        "<unit>celsius</unit><none/><level>2</level><note></note><count>4</count>\
         <gone>null</gone><id>42</id><label>x42</label><mode>slow</mode>",
    );
    assert_eq!(
        out,
        json!({"unit": "celsius", "none": null, "level": 2, "note": null, "count": 4,
               "gone": null, "id": 42, "label": "x42", "mode": "slow"})
    );
}

#[test]
fn nested_elements_are_objects() {
    let schema = json!({
        "type": "object",
        "properties": {"address": {"$ref": "#/$defs/Address"}, "n": {"type": "integer"}},
        "$defs": {"Address": {"type": "object", "properties": {
            "street": {"type": "string"},
            "number": {"type": "string"},
            "floor": {"type": ["integer", "null"]},
            "zip": {"type": ["string", "null"]},
            "geo": {"type": "object", "properties": {"lat": {"type": "number"}}}
        }}}
    });
    let out = args(
        schema,
        "<address>\n  <street>Main St</street>\n  <number>12</number>\n  <floor>3</floor>\n  \
         <zip/>\n  <geo><lat>48.85</lat></geo>\n</address><n>1</n>",
    );
    assert_eq!(
        out,
        json!({"address": {"street": "Main St", "number": "12", "floor": 3, "zip": null,
                           "geo": {"lat": 48.85}}, "n": 1})
    );
}

#[test]
fn arrays_by_repetition_by_item_children_or_from_one_element() {
    let schema = json!({
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "one": {"type": "array", "items": {"type": "integer"}},
            "none": {"type": "array", "items": {"type": "string"}},
            "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}},
            "single": {"type": "array", "items": {"$ref": "#/$defs/Line"}},
            "maybe": {"type": ["array", "null"], "items": {"type": "integer"}}
        },
        "$defs": {"Line": {"type": "object", "properties": {
            "sku": {"type": "string"}, "qty": {"type": "integer"}
        }}}
    });
    let out = args(
        schema,
        "<tags>a</tags><tags>007</tags>\
         <ids><item>1</item><item>2</item></ids>\
         <one>5</one><none/>\
         <lines><sku>A</sku><qty>2</qty></lines><lines><sku>B</sku><qty>1</qty></lines>\
         <single><sku>C</sku><qty>3</qty></single>\
         <maybe><item>9</item></maybe>",
    );
    assert_eq!(
        out,
        json!({
            "tags": ["a", "007"], "ids": [1, 2], "one": [5], "none": [],
            "lines": [{"sku": "A", "qty": 2}, {"sku": "B", "qty": 1}],
            "single": [{"sku": "C", "qty": 3}],
            "maybe": [9]
        })
    );
}

#[test]
fn repeated_elements_for_a_single_value_are_kept_as_an_array() {
    // Nothing is dropped or overwritten: validation tells the model it sent two values.
    let out = args(
        props(json!({"city": {"type": "string"}})),
        "<city>A</city><city>B</city>",
    );
    assert_eq!(out, json!({"city": ["A", "B"]}));
}

#[test]
fn enum_variants_are_typed_by_their_own_branch() {
    // An internally tagged enum, as schemars writes it: the tag picks the branch, and each
    // branch types `value` differently.
    let schema = json!({
        "type": "object",
        "properties": {"action": {"$ref": "#/$defs/Action"}, "actions": {"type": "array", "items": {"$ref": "#/$defs/Action"}}},
        "$defs": {"Action": {"oneOf": [
            {"type": "object", "properties": {
                "type": {"type": "string", "const": "key"}, "value": {"type": "string"}},
             "required": ["type", "value"]},
            {"type": "object", "properties": {
                "type": {"type": "string", "const": "move"}, "value": {"type": "integer"},
                "fast": {"type": "boolean", "default": false}},
             "required": ["type", "value"]}
        ]}}
    });
    let out = args(
        schema,
        "<action><type>move</type><value>42</value><fast>true</fast></action>\
         <actions><type>key</type><value>42</value></actions>\
         <actions><type>move</type><value>7</value></actions>",
    );
    assert_eq!(
        out,
        json!({
            "action": {"type": "move", "value": 42, "fast": true},
            "actions": [{"type": "key", "value": "42"}, {"type": "move", "value": 7}]
        })
    );
}

#[test]
fn entities_cdata_and_whitespace() {
    let schema = props(json!({
        "a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"},
        "d": {"type": "string"}, "e": {"type": "string"}, "f": {"type": "string"},
        "g": {"type": "integer"}
    }));
    let out = args(
        schema,
        "<a>Tom &amp; Jerry &lt;3 &#233;&#x21;</a>\
         <b><![CDATA[if a < b && c > d { }]]></b>\
         <c>\n    two\n    lines\n  </c>\
         <d> padded </d>\
         <e>Tom & Jerry &nbsp;</e>\
         <f>\n<![CDATA[  kept  ]]>\n</f>\
         <g>\n  12\n</g>",
    );
    assert_eq!(
        out,
        json!({
            "a": "Tom & Jerry <3 é!",
            "b": "if a < b && c > d { }",
            "c": "two\n    lines",
            "d": " padded ",
            "e": "Tom & Jerry &nbsp;",
            "f": "  kept  ",
            "g": 12
        })
    );
}

#[test]
fn without_a_schema_json_scalars_or_text() {
    let out = args(
        json!({"type": "object"}),
        "<n>10</n><x>-1.5</x><s>Paris</s><b>true</b><z>null</z><code>007</code><e/>\
         <o><k>v</k></o><r>1</r><r>2</r>",
    );
    assert_eq!(
        out,
        json!({"n": 10, "x": -1.5, "s": "Paris", "b": true, "z": null, "code": "007", "e": "",
               "o": {"k": "v"}, "r": [1, 2]})
    );
    // An unknown property of a typed schema, or a schema without a type: the same rule.
    let out = args(
        props(
            json!({"a": {"type": "string"}, "d": {"description": "anything"}, "e": {"title": "E"}}),
        ),
        "<a>1</a><extra>2</extra><d>true</d><e/>",
    );
    assert_eq!(out, json!({"a": "1", "extra": 2, "d": true, "e": ""}));
}

#[test]
fn json_text_inside_an_element_for_objects_and_arrays() {
    let out = args(
        props(
            json!({"filter": {"type": "object"}, "ids": {"type": "array", "items": {"type": "integer"}}}),
        ),
        r#"<filter>{"lang": "en"}</filter><ids>[1, 2]</ids>"#,
    );
    assert_eq!(out, json!({"filter": {"lang": "en"}, "ids": [1, 2]}));
}

#[test]
fn the_json_body_form_still_works_and_empty_parameters_are_empty() {
    assert_eq!(
        args(json!({"type": "object"}), r#"{"a": "<b>"}"#),
        json!({"a": "<b>"})
    );
    assert_eq!(args(json!({"type": "object"}), ""), json!({}));
    assert_eq!(
        args(json!({"type": "object"}), "<!-- nothing --><a>1</a>"),
        json!({"a": 1})
    );
}

#[test]
fn malformed_elements_are_refused_with_what_and_where() {
    let message = refused("<a>1</b>");
    assert!(message.contains("tool call #1"), "{message}");
    assert!(
        message.contains("expected `</a>`, but `</b>` was found"),
        "{message}"
    );

    let message = refused("<a>1 < 2</a>");
    assert!(message.contains("&lt;"), "{message}");
    assert!(message.contains("near `"), "{message}");

    let message = refused("<a>text<b>1</b></a>");
    assert!(
        message.contains("<a> holds both text and child elements"),
        "{message}"
    );

    let message = refused("<a>1</a>loose text");
    assert!(
        message.contains("text directly inside <parameters>"),
        "{message}"
    );

    let deep = format!("{}1{}", "<a>".repeat(100_000), "</a>".repeat(100_000));
    let message = refused(&deep);
    assert!(message.contains("nested more than 64 levels"), "{message}");
    let fine = format!("{}1{}", "<a>".repeat(60), "</a>".repeat(60));
    assert!(args(json!({"type": "object"}), &fine).get("a").is_some());

    let tools = [ToolDefinition::new(
        "t",
        "A tool.",
        json!({"type": "object"}),
    )];
    let unclosed = parse_tool_calls(
        r#"<tool_call name="t"><parameters><a>1</a><b>"#,
        TextCallFormat::Xml,
        &tools,
    );
    match unclosed {
        Err(TextCallError::Malformed(message)) => {
            assert!(message.contains("<b> is not closed"), "{message}")
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
    let missing_end = parse_tool_calls(
        r#"<tool_call name="t"><parameters><a>1</a></parameters>"#,
        TextCallFormat::Xml,
        &tools,
    );
    match missing_end {
        Err(TextCallError::Malformed(message)) => {
            assert!(message.contains("</tool_call>"), "{message}")
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn an_unknown_tool_is_reported_before_typing() {
    let tools = [ToolDefinition::new(
        "t",
        "A tool.",
        json!({"type": "object"}),
    )];
    let error = parse_tool_calls(
        r#"<tool_call name="nope"><parameters><a>1</a></parameters></tool_call>"#,
        TextCallFormat::Xml,
        &tools,
    )
    .unwrap_err();
    assert!(matches!(error, TextCallError::UnknownTool { ref tool, .. } if tool == "nope"));
}

#[test]
fn several_calls_with_elements_and_prose() {
    let tools = [
        ToolDefinition::new("a", "A.", props(json!({"n": {"type": "integer"}}))),
        ToolDefinition::new("b", "B.", props(json!({"s": {"type": "string"}}))),
    ];
    let reply = parse_tool_calls(
        "Doing both.\n```xml\n<tool_calls>\n<tool_call name=\"a\"><parameters><n>1</n></parameters></tool_call>\n\
         <tool_call name=\"b\"><parameters><s>1</s></parameters></tool_call>\n</tool_calls>\n```\nDone.",
        TextCallFormat::Xml,
        &tools,
    )
    .unwrap();
    let arguments: Vec<&str> = reply.calls.iter().map(|c| c.arguments.as_str()).collect();
    assert_eq!(arguments, [r#"{"n":1}"#, r#"{"s":"1"}"#]);
    assert_eq!(reply.text, "Doing both.\nDone.");
}
