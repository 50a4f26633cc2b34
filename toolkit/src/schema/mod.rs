//! JSON Schemas for tools: the canonical 2020-12 schema built from `#[tool]` parameters, and
//! the provider [`Dialect`]s derived from it.
//!
//! - `canonical` builds a tool's schema from its parameters (what MCP serves, what arguments
//!   are validated against), with every integer type's range stated (`integers`);
//! - `dialect` renders it for each provider, one pass per provider, and maps tool names;
//! - `walk` holds the schema-walking helpers those passes share, and `instance` decides which
//!   branch of a schema a JSON value belongs to (for strict-mode arguments and XML values).

pub(crate) mod canonical;
mod dialect;
pub(crate) mod instance;
mod integers;
pub(crate) mod walk;

pub(crate) use canonical::{param_schema, schema_generator, standalone_schema};
pub use dialect::{Dialect, NameMap, strict_representable};
