//! JSON Schemas for tools: the canonical 2020-12 schema built from `#[tool]` parameters and
//! Rust types. Below `tool` and `args`, which use it; the provider renderings built on it are
//! in `dialect`.
//!
//! - `canonical` builds a tool's schema from its parameters (what MCP serves, what arguments
//!   are validated against), with every integer type's range stated (`integers`);
//! - `walk` holds the schema-walking helpers the dialect passes share, and `instance` decides
//!   which branch of a schema a JSON value belongs to (for strict-mode arguments and XML
//!   values).

pub(crate) mod canonical;
pub(crate) mod instance;
pub(crate) mod integers;
pub(crate) mod walk;

pub(crate) use canonical::{param_schema, schema_generator, standalone_schema};
