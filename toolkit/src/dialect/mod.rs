//! Provider schema dialects: pure passes from the canonical JSON Schema (2020-12) of a tool's
//! parameters to what each model provider accepts, plus tool-name sanitising.
//!
//! The canonical schema stays the source of truth, whatever dialect was sent: arguments coming
//! back from a model are checked against it, not against the dialect's rendering. For tools
//! that do not parse their own arguments (hand-written tools with a JSON input schema, remote
//! A2A and imported MCP tools) that check is schema validation (feature `validate`). A `#[tool]`
//! function's arguments are read by serde into the parameters' Rust types, from which the
//! canonical schema was generated: the type is the check, and where serde accepts a second
//! spelling of a value the schema does not show — an externally tagged enum's unit variant as
//! `{"fast": null}` besides `"fast"` — that spelling is accepted too. A pass may therefore lose precision
//! (Gemini cannot express maps or recursion) but must never make a valid call look invalid
//! to the provider. Every pass accepts any [`Value`]: non-object roots, boolean schemas,
//! dangling or recursive `$ref`s produce a usable schema, never a panic or an endless loop.
//!
//! One file per provider (`openai.rs`, `anthropic.rs`, `gemini.rs`, `mcp.rs`), one for names
//! (`names.rs`) and one for the normalisation of a strict-mode model's arguments
//! (`arguments.rs`); this file holds the [`Dialect`] dispatch. The schema-walking helpers the
//! passes share are in `schema::walk`, below this module.

mod anthropic;
mod arguments;
mod gemini;
mod mcp;
mod names;
mod openai;

use std::borrow::Cow;

use serde_json::Value;

use crate::tool::ToolDefinition;

pub use names::NameMap;
pub use openai::strict_representable;

/// Which provider's tool format to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI function calling with `strict: true` (Structured Outputs subset): every object
    /// closed, every property required, optional ones nullable.
    OpenAiStrict,
    /// OpenAI function calling without `strict`: the canonical schema, lightly cleaned.
    OpenAi,
    /// Anthropic Messages API `tools` (non-strict): the canonical schema, lightly cleaned.
    Anthropic,
    /// Gemini `functionDeclarations` with `parameters` (the OpenAPI 3.0 subset): no `$ref`,
    /// no `additionalProperties`, `nullable` instead of type arrays.
    Gemini,
    /// MCP `tools/list` entries: the canonical schema as is.
    Mcp,
}

impl Dialect {
    /// All dialects, for iteration in tests and caches.
    pub const ALL: [Dialect; 5] = [
        Dialect::OpenAiStrict,
        Dialect::OpenAi,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::Mcp,
    ];

    /// Transform a canonical parameters schema into this dialect's parameters schema.
    ///
    /// The result always has an object root (`"type": "object"`). For
    /// [`Dialect::OpenAiStrict`], a schema holding a map (`additionalProperties` set to a
    /// schema) or another construct strict mode cannot express is transformed as far as
    /// possible and the map is left open; such a schema is not accepted with `strict: true`,
    /// which is why [`Dialect::render`] falls back to non-strict for it (see
    /// [`strict_representable`]).
    pub fn parameters(self, canonical: &Value) -> Value {
        match self {
            Dialect::OpenAiStrict => openai::strict_parameters(canonical),
            Dialect::OpenAi => openai::loose_parameters(canonical),
            Dialect::Anthropic => anthropic::parameters(canonical),
            Dialect::Gemini => gemini::parameters(canonical),
            Dialect::Mcp => mcp::parameters(canonical),
        }
    }

    /// The full tool entry in this provider's wire format, using `name` (already sanitised) as
    /// the name.
    ///
    /// - `OpenAiStrict`: `{"type":"function","function":{name, description, parameters,
    ///   "strict":true}}`. When [`strict_representable`] is false for the canonical schema
    ///   (maps, free-form values, `not`, ...), OpenAI would reject the whole request, so the
    ///   entry falls back to the [`Dialect::OpenAi`] parameters with `"strict": false`.
    /// - `OpenAi`: the same shape without `strict`.
    /// - `Anthropic`: `{name, description, input_schema}`.
    /// - `Gemini`: a FunctionDeclaration `{name, description, parameters}`; `parameters` is
    ///   omitted for a tool without parameters, because Gemini rejects an `OBJECT` with empty
    ///   `properties`.
    /// - `Mcp`: `{name, description, inputSchema, outputSchema?, annotations}`.
    pub fn render(self, def: &ToolDefinition, name: &str) -> Value {
        match self {
            Dialect::OpenAiStrict => openai::render_strict(def, name),
            Dialect::OpenAi => openai::render_loose(def, name),
            Dialect::Anthropic => anthropic::render(def, name),
            Dialect::Gemini => gemini::render(def, name),
            Dialect::Mcp => mcp::render(def, name),
        }
    }

    /// Undo, in `arguments` a model sent for this dialect's schema, what the dialect changed,
    /// so that they can be validated against and deserialized with `canonical`.
    ///
    /// For [`Dialect::OpenAiStrict`], optional parameters are required-and-nullable on the
    /// wire; a `null` for one whose canonical schema rejects `null` (a parameter with a
    /// serde default) means "not given" and is removed, at every nesting level: in objects,
    /// array items, and inside enums of every serde tagging, where the `anyOf`/`oneOf`
    /// branch a value belongs to is found by its tag, required keys and types (the first
    /// that fits, the order serde tries untagged variants in). The other dialects keep
    /// optionals optional and leave the arguments untouched.
    pub fn normalize_arguments(self, canonical: &Value, arguments: &mut Value) {
        if self == Dialect::OpenAiStrict {
            arguments::strip_absent_nulls(canonical, arguments);
        }
    }

    /// Make a name valid for this dialect. Returns [`Cow::Borrowed`] when already valid.
    ///
    /// OpenAI and Anthropic: `^[a-zA-Z0-9_-]{1,64}$`; Gemini: `^[A-Za-z_][A-Za-z0-9_-]{0,62}$`;
    /// MCP: `^[A-Za-z0-9_.-]{1,128}$`. Other characters become `_`, long names are truncated,
    /// an empty name becomes `_`. Distinct names may sanitise to the same result; use
    /// [`NameMap`] to get unique wire names and the way back.
    pub fn sanitize_name(self, name: &str) -> Cow<'_, str> {
        names::sanitize(self, name)
    }
}

#[cfg(test)]
mod tests;
