//! Checking a call's arguments against the input schema the model was shown, for tools that do
//! not parse their own arguments.
//!
//! `#[tool]` tools deserialize every parameter with serde, which checks names, types and enums
//! on the way (and costs nothing more). Every other tool would get whatever the model sent:
//! a hand-written [`AgentTool`](crate::AgentTool) with a whole input schema
//! ([`ToolSpec::with_input_schema`](crate::tool::ToolSpec::with_input_schema)), one with
//! [`ParamSpec`](crate::tool::ParamSpec)s that carry no type check, and the tools of
//! [`DynamicTools`](crate::toolkit::DynamicTools) sets (remote A2A tools, MCP imports). For them the
//! definition's `parameters` — the schema the model saw — is compiled once, when the toolkit is
//! built or the dynamic set replaced, and every call is checked against it before the tool
//! runs, before approval and before background submission. Every problem found is listed in
//! one model-visible [`InvalidArguments`](crate::error::ToolErrorKind::InvalidArguments) error, each
//! with where it is ("argument `filter.limit`: 0 is less than the minimum of 1").
//!
//! Two rules keep the check in line with the rest of argument handling:
//!
//! - For tools with parameters, the resolver has already dealt with missing, unknown, hidden
//!   and repeated arguments (under the toolkit's policies, with registration defaults); the
//!   schema checks the values the model gave, so it does not report those again.
//! - OpenAI's strict mode shows optional properties as required-but-nullable, so a model sends
//!   `null` for "not given". A `null` the schema refuses for an object property is read as
//!   the property being absent, and the arguments are checked again that way; the tool still
//!   gets the text the model sent.
//!
//! A schema that does not compile is a [`BuildError`](crate::BuildError) for a registration.
//! In a dynamic set (which comes from a peer at run time) the tool is kept, a `tracing`
//! warning is logged when the set is installed, and each call of it fails with an
//! [`Execution`](crate::error::ToolErrorKind::Execution) error saying the tool cannot be used: its
//! arguments could not be checked.
//!
//! All of this is the cargo feature `validate` (on by default, and enabled by `a2a` and `mcp`).
//! Without it, such tools receive the model's arguments unchecked.

#[cfg(feature = "validate")]
pub(crate) use enabled::{ArgSchema, check, compile, compile_dynamic, is_valid};

#[cfg(not(feature = "validate"))]
pub(crate) use disabled::{ArgSchema, check, compile, compile_dynamic, is_valid};

/// Which check a tool's arguments need against its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Needs {
    /// None: the tool parses its own arguments, or every visible parameter has a type check.
    Nothing,
    /// The whole argument object (a tool with a whole input schema).
    Whole,
    /// The values of the parameters without a type check.
    Params,
}

/// What [`check`] needs to know about one call.
// Without the feature nothing reads it; the resolver still builds it, which keeps one code path.
#[cfg_attr(not(feature = "validate"), allow(dead_code))]
pub(crate) struct Target<'a> {
    /// The tool's name, for the unusable-schema error.
    pub(crate) tool: &'a str,
    /// The whole argument text (tools with a whole input schema).
    pub(crate) text: &'a str,
    /// The values the model gave for parameters without a type check: name and JSON text.
    pub(crate) values: Vec<(&'a str, &'a str)>,
}

#[cfg(feature = "validate")]
mod enabled {
    use std::fmt;

    use jsonschema::error::ValidationErrorKind;
    use jsonschema::{ValidationError, Validator};
    use serde_json::{Map, Value};

    use super::{Needs, Target};
    use crate::error::ToolError;

    /// Most problems listed in one error; the rest are counted. A model that sends thousands
    /// of bad array items should not get thousands of lines back.
    const MAX_PROBLEMS: usize = 20;

    /// Instances longer than this (as JSON text) are not quoted in messages.
    const MAX_QUOTED: usize = 80;

    /// Most allowed values of an `enum` listed in a message.
    const MAX_OPTIONS: usize = 30;

    /// A tool's compiled input schema.
    pub(crate) enum ArgSchema {
        /// Check the whole argument object.
        Whole(Validator),
        /// Check the object of the values the model gave for unchecked parameters.
        Params(Validator),
        /// The declared schema does not compile (a dynamic tool): calls fail with this reason.
        Unusable(String),
    }

    impl fmt::Debug for ArgSchema {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                ArgSchema::Whole(_) => f.write_str("ArgSchema::Whole"),
                ArgSchema::Params(_) => f.write_str("ArgSchema::Params"),
                ArgSchema::Unusable(why) => write!(f, "ArgSchema::Unusable({why:?})"),
            }
        }
    }

    /// Compile `parameters` for a tool that needs the check ([`Needs`]): `None` when it needs
    /// none, `Err` with the reason when the schema does not compile.
    pub(crate) fn compile(needs: Needs, parameters: &Value) -> Option<Result<ArgSchema, String>> {
        let whole = match needs {
            Needs::Nothing => return None,
            Needs::Whole => true,
            Needs::Params => false,
        };
        Some(match jsonschema::validator_for(parameters) {
            Ok(v) if whole => Ok(ArgSchema::Whole(v)),
            Ok(v) => Ok(ArgSchema::Params(v)),
            Err(e) => Err(e.to_string()),
        })
    }

    /// [`compile`] for a tool of a dynamic set, which comes from a peer at run time: a schema
    /// that does not compile is logged, and the tool kept with a schema that fails each of its
    /// calls, so the rest of the set stays usable and this tool never runs unchecked.
    pub(crate) fn compile_dynamic(
        tool: &str,
        needs: Needs,
        parameters: &Value,
    ) -> Option<ArgSchema> {
        match compile(needs, parameters)? {
            Ok(schema) => Some(schema),
            Err(reason) => {
                tracing::warn!(
                    tool,
                    error = %reason,
                    "the input schema of a dynamic tool does not compile; its calls will fail"
                );
                Some(ArgSchema::Unusable(reason))
            }
        }
    }

    /// Whether `value` fits `schema` (`false` when the schema does not compile); used once per
    /// tool, to check the example call an error shows.
    pub(crate) fn is_valid(schema: &Value, value: &Value) -> Option<bool> {
        Some(jsonschema::validator_for(schema).is_ok_and(|v| v.is_valid(value)))
    }

    /// The problems of one call's arguments (empty when they are valid), or the error that
    /// the tool cannot be used.
    pub(crate) fn check(schema: &ArgSchema, target: Target<'_>) -> Result<Vec<String>, ToolError> {
        match schema {
            ArgSchema::Unusable(why) => Err(ToolError::execution(format!(
                "tool `{}` cannot be used: its declared input schema is not valid, so its arguments cannot be checked",
                target.tool
            ))
            .with_detail(format!(
                "tool `{}`: the input schema does not compile: {why}",
                target.tool
            ))),
            ArgSchema::Whole(validator) => {
                // Only reached for text the resolver parsed as an object.
                let Ok(instance) = serde_json::from_str::<Value>(target.text) else {
                    return Ok(Vec::new());
                };
                Ok(whole_problems(validator, instance))
            }
            ArgSchema::Params(validator) => {
                let instance: Map<String, Value> = target
                    .values
                    .iter()
                    .filter_map(|(name, text)| {
                        serde_json::from_str(text).ok().map(|v| (name.to_string(), v))
                    })
                    .collect();
                let instance = Value::Object(instance);
                let errors = validator.iter_errors(&instance).filter(|e| {
                    // Missing arguments are the resolver's (it knows registration defaults).
                    !(e.instance_path().is_empty()
                        && matches!(e.kind(), ValidationErrorKind::Required { .. }))
                });
                Ok(describe_all(errors, &instance))
            }
        }
    }

    /// Check the whole object, reading a refused `null` property as an absent one.
    fn whole_problems(validator: &Validator, mut instance: Value) -> Vec<String> {
        let errors: Vec<ValidationError<'_>> = validator.iter_errors(&instance).collect();
        if errors.is_empty() {
            return Vec::new();
        }
        let nulls: Vec<Vec<Step>> = errors
            .iter()
            .filter(|e| e.instance().is_null())
            .map(|e| steps(&instance, e.instance_path().as_str()))
            .filter(|path| matches!(path.last(), Some(Step::Key(_))))
            .collect();
        if nulls.is_empty() {
            return describe_all(errors.into_iter(), &instance);
        }
        drop(errors);
        for path in &nulls {
            remove(&mut instance, path);
        }
        describe_all(validator.iter_errors(&instance), &instance)
    }

    /// One segment of a location inside the arguments.
    enum Step {
        Key(String),
        Index(usize),
    }

    /// The steps of a JSON pointer, told apart by walking `instance` (a pointer alone cannot
    /// say whether `/0` is an index or a key named "0").
    fn steps(instance: &Value, pointer: &str) -> Vec<Step> {
        let mut out = Vec::new();
        let mut node = Some(instance);
        for raw in pointer.split('/').skip(1) {
            let token = raw.replace("~1", "/").replace("~0", "~");
            match node {
                Some(Value::Array(items)) => match token.parse::<usize>() {
                    Ok(i) => {
                        node = items.get(i);
                        out.push(Step::Index(i));
                    }
                    Err(_) => {
                        node = None;
                        out.push(Step::Key(token));
                    }
                },
                Some(Value::Object(map)) => {
                    node = map.get(&token);
                    out.push(Step::Key(token));
                }
                _ => {
                    node = None;
                    out.push(Step::Key(token));
                }
            }
        }
        out
    }

    fn remove(instance: &mut Value, path: &[Step]) {
        let Some((Step::Key(last), parents)) = path.split_last() else {
            return;
        };
        let mut node = instance;
        for step in parents {
            let next = match (step, node) {
                (Step::Key(k), Value::Object(map)) => map.get_mut(k),
                (Step::Index(i), Value::Array(items)) => items.get_mut(*i),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => return,
            }
        }
        if let Value::Object(map) = node {
            map.remove(last);
        }
    }

    /// `filter.items[2].name`; empty for the argument object itself.
    fn display_path(path: &[Step]) -> String {
        let mut out = String::new();
        for step in path {
            match step {
                Step::Index(i) => out.push_str(&format!("[{i}]")),
                Step::Key(k) if out.is_empty() => out.push_str(k),
                Step::Key(k) => {
                    out.push('.');
                    out.push_str(k);
                }
            }
        }
        out
    }

    fn describe_all<'i>(
        errors: impl Iterator<Item = ValidationError<'i>>,
        instance: &Value,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        let mut more = 0usize;
        for error in errors {
            for problem in describe(&error, instance) {
                if problems.len() < MAX_PROBLEMS {
                    problems.push(problem);
                } else {
                    more += 1;
                }
            }
        }
        if more > 0 {
            problems.push(format!("and {more} more problem(s)"));
        }
        problems
    }

    /// One error as the model should read it: where, and what is wrong — never the engine's
    /// internals.
    fn describe(error: &ValidationError<'_>, instance: &Value) -> Vec<String> {
        let path = display_path(&steps(instance, error.instance_path().as_str()));
        let inside = |name: &str| {
            if path.is_empty() {
                name.to_string()
            } else {
                format!("{path}.{name}")
            }
        };
        let message = match error.kind() {
            ValidationErrorKind::Required { property } => {
                let name = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_string);
                return vec![format!("missing required argument `{}`", inside(&name))];
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                return unexpected
                    .iter()
                    .map(|name| {
                        if path.is_empty() {
                            format!("unknown argument `{name}`")
                        } else {
                            format!("argument `{path}`: unknown property `{name}`")
                        }
                    })
                    .collect();
            }
            ValidationErrorKind::BacktrackLimitExceeded { .. }
            | ValidationErrorKind::RegexEngineFailure { .. } => {
                "the value could not be checked against its pattern; send a simpler value"
                    .to_string()
            }
            ValidationErrorKind::Referencing(_) => {
                "the value could not be checked: the tool's schema refers to a definition that cannot be found".to_string()
            }
            ValidationErrorKind::Enum { options } => {
                // The engine names only the first few options; a model needs them all to
                // choose one.
                let value = if quoted_len(error.instance()) > MAX_QUOTED {
                    "the value".to_string()
                } else {
                    error.instance().to_string()
                };
                format!("{value} is not one of {}", one_of(options))
            }
            _ if quoted_len(error.instance()) > MAX_QUOTED => {
                error.masked_with("the value").to_string()
            }
            _ => error.to_string(),
        };
        vec![if path.is_empty() {
            format!("the arguments: {message}")
        } else {
            format!("argument `{path}`: {message}")
        }]
    }

    /// `"a", "b" or "c"`: the allowed values, up to [`MAX_OPTIONS`] of them.
    fn one_of(options: &Value) -> String {
        let Some(options) = options.as_array() else {
            return options.to_string();
        };
        let mut shown: Vec<String> = options
            .iter()
            .take(MAX_OPTIONS)
            .map(Value::to_string)
            .collect();
        if options.len() > MAX_OPTIONS {
            shown.push(format!("{} more", options.len() - MAX_OPTIONS));
        }
        match shown.split_last() {
            None => "no value (the schema allows none)".to_string(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }

    /// The length of a value's JSON text, counted without writing it out past the limit.
    fn quoted_len(value: &Value) -> usize {
        struct Count(usize);
        impl std::io::Write for Count {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0 += buf.len();
                if self.0 > MAX_QUOTED {
                    // Stop serializing: the length is all that matters.
                    return Err(std::io::Error::other("long enough"));
                }
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut count = Count(0);
        let _ = serde_json::to_writer(&mut count, value);
        count.0
    }

    #[cfg(test)]
    mod tests {
        use serde_json::json;

        use super::*;

        fn problems(schema: Value, instance: Value) -> Vec<String> {
            whole_problems(&jsonschema::validator_for(&schema).unwrap(), instance)
        }

        #[test]
        fn nested_locations_are_named_like_arguments() {
            let schema = json!({
                "type": "object",
                "properties": {
                    "filter": {
                        "type": "object",
                        "properties": {
                            "limit": {"type": "integer", "minimum": 1},
                            "tags": {"type": "array", "items": {"type": "string"}}
                        },
                        "required": ["field"],
                        "additionalProperties": false
                    },
                    "0": {"type": "string"}
                },
                "additionalProperties": false
            });
            let found = problems(
                schema,
                json!({"filter": {"limit": 0, "tags": ["a", 7], "sort": "x"}, "0": 1, "extra": true}),
            );
            assert_eq!(
                found,
                [
                    "argument `filter.limit`: 0 is less than the minimum of 1",
                    "argument `filter.tags[1]`: 7 is not of type \"string\"",
                    "argument `filter`: unknown property `sort`",
                    "missing required argument `filter.field`",
                    "argument `0`: 1 is not of type \"string\"",
                    "unknown argument `extra`",
                ]
            );
        }

        #[test]
        fn refused_nulls_of_properties_count_as_absent() {
            let schema = json!({
                "type": "object",
                "properties": {
                    "q": {"type": "string"},
                    "limit": {"type": "integer"},
                    "cursor": {"type": ["string", "null"]},
                    "items": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["q", "cursor"]
            });
            // Optional `limit` as null: absent. A nullable required property keeps its null.
            assert!(
                problems(
                    schema.clone(),
                    json!({"q": "x", "limit": null, "cursor": null})
                )
                .is_empty()
            );
            // A required property sent as null is missing; a null array item stays wrong.
            assert_eq!(
                problems(schema, json!({"q": null, "cursor": "c", "items": [null]})),
                [
                    "missing required argument `q`",
                    "argument `items[0]`: null is not of type \"string\""
                ]
            );
        }

        #[test]
        fn long_values_are_not_quoted_and_problems_are_capped() {
            let schema = json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "maxLength": 3},
                    "ids": {"type": "array", "items": {"type": "integer"}}
                }
            });
            let long = "x".repeat(500);
            let found = problems(schema.clone(), json!({"text": long}));
            assert_eq!(
                found,
                ["argument `text`: the value is longer than 3 characters"]
            );
            let ids: Vec<String> = (0..50).map(|i| i.to_string()).collect();
            let found = problems(schema, json!({"ids": ids}));
            assert_eq!(found.len(), MAX_PROBLEMS + 1);
            assert_eq!(
                found[0],
                "argument `ids[0]`: \"0\" is not of type \"integer\""
            );
            assert_eq!(found[MAX_PROBLEMS], "and 30 more problem(s)");
        }

        #[test]
        fn every_allowed_value_is_named_up_to_a_limit() {
            let few = json!({"properties": {"op": {"enum": ["add", 1, null]}}});
            assert_eq!(
                problems(few, json!({"op": "pow"})),
                ["argument `op`: \"pow\" is not one of \"add\", 1 or null"]
            );
            let many: Vec<String> = (0..MAX_OPTIONS + 5).map(|i| format!("v{i}")).collect();
            let found = problems(
                json!({"properties": {"op": {"enum": many}}}),
                json!({"op": "x"}),
            );
            assert!(found[0].contains("\"v29\" or 5 more"), "{found:?}");
            assert!(!found[0].contains("\"v30\""), "{found:?}");
        }

        #[test]
        fn a_pointer_step_is_an_index_only_inside_an_array() {
            let instance = json!({"a/b": {"~": [1, {"2": 3}]}});
            let path = steps(&instance, "/a~1b/~0/1/2");
            assert_eq!(display_path(&path), "a/b.~[1].2");
        }
    }
}

#[cfg(not(feature = "validate"))]
mod disabled {
    use serde_json::Value;

    use super::{Needs, Target};
    use crate::error::ToolError;

    /// Without the `validate` feature there is nothing to compile.
    #[derive(Debug)]
    pub(crate) enum ArgSchema {}

    /// Without the `validate` feature no tool is checked.
    pub(crate) fn compile(_: Needs, _: &Value) -> Option<Result<ArgSchema, String>> {
        None
    }

    /// Without the `validate` feature no tool is checked.
    pub(crate) fn compile_dynamic(_: &str, _: Needs, _: &Value) -> Option<ArgSchema> {
        None
    }

    pub(crate) fn check(schema: &ArgSchema, _: Target<'_>) -> Result<Vec<String>, ToolError> {
        match *schema {}
    }

    /// Without the `validate` feature nothing can say: the example builder is trusted.
    pub(crate) fn is_valid(_: &Value, _: &Value) -> Option<bool> {
        None
    }
}
