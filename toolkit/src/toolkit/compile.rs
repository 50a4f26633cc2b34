//! The compile step: one tool's spec, with what its registration bound, becomes an [`Entry`]
//! — its argument plan, the definition the model is shown, its compiled input schema. The
//! builder compiles registrations once in [`build`](super::ToolkitBuilder::build), and a
//! [`DynamicTools`](super::DynamicTools) set compiles its tools each time it is replaced; both
//! produce the same `Entry`, so dispatch treats them alike.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::args::ParamPlan;
use crate::args::schema as validate;
use crate::context::ContextReads;
use crate::dialect::Dialect;
use crate::error::ConfigError;
use crate::exec::{ExecSettings, RetryPolicy, SyncPace};
use crate::param::{ParamKind, PlannedParam};
use crate::schema::canonical;
use crate::tool::{AgentTool, ToolDefinition, ToolOptions, ToolSpec};

/// One tool, ready to be called: registered at build time or held by a dynamic set.
pub(crate) struct Entry {
    pub(crate) tool: Arc<dyn AgentTool>,
    pub(crate) plan: Arc<ParamPlan>,
    pub(crate) options: Arc<ToolOptions>,
    pub(crate) definition: ToolDefinition,
    /// Provider renderings, made on first use.
    pub(crate) rendered: [OnceLock<Value>; Dialect::ALL.len()],
    /// Where the calls of a synchronous tool run (`None` for async tools).
    pub(crate) pace: Option<Arc<SyncPace>>,
    /// Its calls' context carries the calling view: the tool may read it (a context parameter
    /// that reads the toolkit, the whole context, or does not say; or a tool with no declared
    /// parameters, which reads its context as it likes). Others are spared the reference count.
    pub(crate) wants_caller: bool,
}

/// A value bound with `.preset` or `.default_arg`, serialized when it was given.
pub(super) struct Binding {
    pub(super) param: String,
    pub(super) value: Result<Box<RawValue>, String>,
    pub(super) hides: bool,
}

/// What a schema that does not compile means for the tool.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// Registered by the developer: a build error.
    Registered,
    /// Found at run time (a peer's tool): logged, and each call of the tool fails.
    Dynamic,
}

/// Compile `tool` (whose spec is `spec`) under `name` with `bindings`; configuration
/// mistakes are added to `errors`.
pub(super) fn compile(
    name: &str,
    tool: Arc<dyn AgentTool>,
    spec: ToolSpec,
    bindings: &[Binding],
    origin: Origin,
    errors: &mut Vec<ConfigError>,
) -> Entry {
    let mut plan = plan_params(name, &spec, bindings, errors);
    let definition = definition_of(name, &spec, &plan);
    plan.shown = Some(definition.shared_parameters());
    plan.schema = match origin {
        Origin::Registered => match validate::compile(plan.needs(), definition.parameters()) {
            Some(Ok(schema)) => Some(Arc::new(schema)),
            Some(Err(reason)) => {
                errors.push(ConfigError::InvalidInputSchema {
                    tool: name.to_string(),
                    reason,
                });
                None
            }
            None => None,
        },
        Origin::Dynamic => {
            validate::compile_dynamic(name, plan.needs(), definition.parameters()).map(Arc::new)
        }
    };
    let pace = spec.options.blocking.then(Arc::default);
    let wants_caller = spec.params.is_empty()
        || plan.params.iter().any(|p| {
            p.kind == ParamKind::Context
                && p.reads.is_none_or(|reads| match reads() {
                    ContextReads::Nothing => false,
                    ContextReads::Types(types) => {
                        types.contains(&std::any::TypeId::of::<super::Toolkit>())
                    }
                    _ => true,
                })
        });
    Entry {
        tool,
        plan: Arc::new(plan),
        options: Arc::new(spec.options),
        definition,
        rendered: Default::default(),
        pace,
        wants_caller,
    }
}

/// The toolkit-wide settings every tool's [`ExecSettings`] starts from.
#[derive(Clone, Debug)]
pub(super) struct ExecBase {
    pub(super) timeout: Option<Duration>,
    pub(super) total_timeout: Option<Duration>,
    pub(super) retry: RetryPolicy,
    pub(super) max_output_bytes: usize,
}

/// What one registration overrides of its tools' execution settings
/// ([`ToolkitBuilder::tool_timeout`](super::ToolkitBuilder::tool_timeout) and its siblings).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Overrides {
    pub(super) timeout: Option<Duration>,
    pub(super) retries: Option<u32>,
    pub(super) max_output_bytes: Option<usize>,
}

/// A tool's execution settings: the registration's overrides over its own options over the
/// toolkit's defaults.
pub(super) fn settings_for(
    options: &ToolOptions,
    overrides: Overrides,
    defaults: &ExecBase,
) -> ExecSettings {
    let mut retry = defaults.retry.clone();
    if let Some(n) = overrides.retries.or(options.retries) {
        retry.max_retries = n;
        if retry.initial_backoff.is_zero() && n > 0 {
            // A tool asked for retries on a toolkit without a policy: a sane default backoff.
            retry = RetryPolicy::exponential(n, Duration::from_millis(100), 2.0);
        }
    }
    ExecSettings {
        attempt_timeout: overrides.timeout.or(options.timeout).or(defaults.timeout),
        total_timeout: defaults.total_timeout,
        retry,
        max_output_bytes: overrides
            .max_output_bytes
            .or(options.max_output_bytes)
            .unwrap_or(defaults.max_output_bytes),
    }
}

/// A binding must name a parameter of at least one tool of its registration.
pub(super) fn check_bindings_exist(
    bindings: &[Binding],
    specs: &[ToolSpec],
    errors: &mut Vec<ConfigError>,
) {
    for b in bindings {
        if specs
            .iter()
            .any(|s| s.params.iter().any(|p| p.name == b.param))
        {
            continue;
        }
        let tools = specs
            .iter()
            .map(|s| format!("`{}`", s.name))
            .collect::<Vec<_>>()
            .join(", ");
        let params: Vec<String> = specs
            .iter()
            .flat_map(|s| s.params.iter().map(|p| format!("`{}`", p.name)))
            .collect();
        let hint = if params.is_empty() {
            String::new()
        } else {
            format!("; its parameters are {}", params.join(", "))
        };
        errors.push(ConfigError::UnknownParameter {
            what: if b.hides { "preset" } else { "default_arg" },
            param: b.param.clone(),
            tools,
            hint,
        });
    }
}

/// The model-facing definition of one tool: the behaviour hints are the tool's own
/// ([`ToolOptions::annotations`]), declared once.
fn definition_of(name: &str, spec: &ToolSpec, plan: &ParamPlan) -> ToolDefinition {
    let definition = ToolDefinition::new(
        name,
        spec.description.to_string(),
        canonical::input_schema(
            spec.input_schema.as_ref(),
            &spec.params,
            &spec.defs,
            &plan.params,
        ),
    )
    .with_annotations(spec.options.annotations.clone());
    match &spec.output_schema {
        Some(out) => definition.with_output_schema(out.clone()),
        None => definition,
    }
}

/// Apply a registration's bindings to one tool's parameters.
fn plan_params(
    tool: &str,
    spec: &ToolSpec,
    bindings: &[Binding],
    errors: &mut Vec<ConfigError>,
) -> ParamPlan {
    let mut params = Vec::with_capacity(spec.params.len());
    for p in &spec.params {
        let mut planned = PlannedParam {
            name: p.name.clone(),
            kind: p.kind,
            rust_type: p.rust_type,
            check: p.check,
            reads: p.reads,
            hidden: !p.kind.is_visible(),
            binding: None,
        };
        // The last binding of a name wins, like repeated builder calls usually do.
        if let Some(b) = bindings.iter().rev().find(|b| b.param == p.name) {
            let what = if b.hides { "preset" } else { "default_arg" };
            let refuse = |reason: String| ConfigError::InvalidBinding {
                what,
                tool: tool.to_string(),
                param: p.name.to_string(),
                reason,
            };
            if p.kind == ParamKind::Context {
                errors.push(refuse(
                    "it is a #[ctx] parameter, filled by type from the context; put the value in the context instead".into(),
                ));
            } else if p.kind == ParamKind::Preset && !b.hides {
                errors.push(refuse(
                    "it is a #[preset] parameter; bind it with .preset(..)".into(),
                ));
            } else {
                match &b.value {
                    Err(e) => errors.push(refuse(format!("the value cannot be serialized: {e}"))),
                    Ok(raw) => {
                        if let Some(Err(e)) = p.check.map(|check| check(raw.get())) {
                            errors.push(refuse(format!(
                                "the value {} does not fit the parameter type `{}`: {e}",
                                raw.get(),
                                p.rust_type
                            )));
                        }
                        planned.binding = Some(raw.clone());
                        planned.hidden |= b.hides;
                    }
                }
            }
        }
        if p.kind == ParamKind::Preset && planned.binding.is_none() {
            errors.push(ConfigError::UnboundPreset {
                tool: tool.to_string(),
                param: p.name.to_string(),
                ty: p.rust_type.to_string(),
            });
        }
        params.push(planned);
    }
    ParamPlan {
        tool: Arc::from(tool),
        params,
        dynamic: spec.input_schema.is_some(),
        self_parsing: spec.self_parsing,
        schema: None,
        shown: None,
        example: OnceLock::new(),
    }
}
