//! JSON Schemas for tools: the canonical 2020-12 schema built from `#[tool]` parameters, and
//! the provider [`Dialect`]s derived from it.

pub mod canonical;
pub mod dialect;
pub(crate) mod instance;
mod integers;

pub use canonical::{param_schema, schema_generator, standalone_schema};
pub use dialect::{Dialect, NameMap};
