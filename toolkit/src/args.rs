//! Where each argument comes from: the precedence resolver and the [`ToolArgs`] it produces.
//!
//! `resolve` is the one place that applies the rule of the crate docs (first hit wins):
//!
//! 1. the model's arguments — for visible parameters only; a model value for a hidden
//!    parameter is refused ([`HiddenArgs::Reject`]) or dropped ([`HiddenArgs::Ignore`]);
//! 2. values bound at registration: `.preset` (hides the parameter) and `.default_arg`
//!    (stays visible, the model's value wins);
//! 3. the context, by type, call > agent > toolkit — `resolve` binds the toolkit layer and the
//!    call info into the [`ToolContext`] that [`ToolArgs::context_value`] reads;
//! 4. `#[arg(default)]` / `Option` ⇒ `None` — an absent optional slot, filled by the tool;
//! 5. otherwise an error: "missing required argument" for the model, or a configuration
//!    error naming the parameter and type for hidden ones.
//!
//! Arguments are parsed once into borrowed raw slices (no `Value` tree), so the cost over a
//! direct `serde_json::from_str` into a struct is one scan of the keys. Tools that do not parse
//! their own arguments also get them checked against their input schema (the `validate`
//! feature), in the same pass and the same error.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::context::{FromToolContext, ToolContext};
use crate::error::{ToolError, ToolErrorKind};
use crate::tool::{ParamKind, TypeCheck};
use crate::validate::{self, ArgSchema};

/// What happens when the model sends a value for a hidden (preset or context) parameter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HiddenArgs {
    /// Refuse the call with a model-visible [`HiddenArgument`](ToolErrorKind::HiddenArgument)
    /// error. The default: a model must never be able to set a hidden value.
    #[default]
    Reject,
    /// Drop the value, log a `tracing` warning, and run with the bound value.
    Ignore,
}

/// What happens when the model sends an argument the tool does not declare.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnknownArgs {
    /// Refuse the call with a model-visible error naming the unknown argument and the
    /// expected ones. The default: a hallucinated parameter usually means the model
    /// misunderstood the tool, and telling it is how it recovers.
    #[default]
    Reject,
    /// Drop unknown arguments silently.
    Ignore,
}

/// The resolver's policies, set on the toolkit builder.
#[derive(Clone, Copy, Debug)]
pub struct ArgPolicy {
    /// Model values for hidden parameters.
    pub hidden: HiddenArgs,
    /// Arguments the tool does not declare.
    pub unknown: UnknownArgs,
    /// Largest accepted argument text, in bytes (never more than `u32::MAX`).
    pub max_bytes: usize,
}

impl Default for ArgPolicy {
    fn default() -> Self {
        ArgPolicy {
            hidden: HiddenArgs::Reject,
            unknown: UnknownArgs::Reject,
            max_bytes: DEFAULT_MAX_ARGUMENT_BYTES,
        }
    }
}

/// Default limit on the size of one call's argument text: 4 MiB.
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 4 << 20;

/// One parameter as a registration sees it: the declaration plus what the builder bound.
#[derive(Clone, Debug)]
pub(crate) struct PlannedParam {
    pub(crate) name: Cow<'static, str>,
    pub(crate) kind: ParamKind,
    pub(crate) rust_type: &'static str,
    pub(crate) check: Option<TypeCheck>,
    /// Hidden from the model: `#[preset]`, `#[ctx]`, or a visible parameter bound by `.preset`.
    pub(crate) hidden: bool,
    /// JSON text bound by `.preset` or `.default_arg`.
    pub(crate) binding: Option<Box<RawValue>>,
}

/// The parameters of one registration, in declaration order.
#[derive(Clone, Debug)]
pub(crate) struct ParamPlan {
    pub(crate) tool: Arc<str>,
    pub(crate) params: Vec<PlannedParam>,
    /// The tool takes its argument object whole (no declared parameters).
    pub(crate) dynamic: bool,
    /// The tool parses its own arguments (see [`ToolSpec::self_parsing`](crate::ToolSpec)).
    pub(crate) self_parsing: bool,
    /// The compiled input schema, for tools that do not parse their own arguments (see
    /// `crate::validate`); `None` when nothing needs checking.
    pub(crate) schema: Option<Arc<ArgSchema>>,
}

/// Resolved slots exist only on the thorough path, so they live on the heap.
type Slots = Vec<Slot>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Absent,
    /// Byte range of the model's value inside the argument text (the text is at most
    /// `u32::MAX` bytes: see [`ArgPolicy::max_bytes`]).
    Model(u32, u32),
    /// The registration's bound value.
    Bound,
}

/// The resolved arguments of one call, read by the tool (generated code calls
/// [`value`](Self::value) and [`context_value`](Self::context_value) per parameter).
#[derive(Clone)]
pub struct ToolArgs {
    text: String,
    slots: Slots,
    resolved: bool,
    plan: Arc<ParamPlan>,
    policy: ArgPolicy,
    ctx: ToolContext,
}

impl fmt::Debug for ToolArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolArgs")
            .field("tool", &self.plan.tool)
            .field("arguments", &self.text)
            .finish_non_exhaustive()
    }
}

impl ToolArgs {
    /// Deserialize the parameter at `index` (its position in the signature). `Ok(None)` when
    /// neither the model nor the registration gave a value (rows 4–5 are the caller's).
    pub fn value<T: DeserializeOwned>(&self, index: usize) -> Result<Option<T>, ToolError> {
        let param = self.param(index)?;
        if !self.resolved {
            return Err(ToolError::execution(
                "internal error: tool arguments read before they were resolved",
            )
            .with_detail(format!(
                "tool `{}` must call ToolArgs::resolve_slots before ToolArgs::value",
                self.plan.tool
            )));
        }
        let text = match self.slots[index] {
            Slot::Absent => return Ok(None),
            Slot::Model(start, end) => &self.text[start as usize..end as usize],
            Slot::Bound => match &param.binding {
                Some(raw) => raw.get(),
                None => return Ok(None),
            },
        };
        deserialize(text)
            .map(Some)
            .map_err(|e| ToolError::invalid_arguments(e.describe(&param.name)))
    }

    /// Deserialize a required parameter: absent is a "missing required argument" error.
    pub fn required<T: DeserializeOwned>(&self, index: usize) -> Result<T, ToolError> {
        self.value(index)?.ok_or_else(|| {
            let name = self
                .param(index)
                .map(|p| p.name.clone())
                .unwrap_or_default();
            ToolError::invalid_arguments(format!("missing required argument `{name}`"))
        })
    }

    /// Extract a `#[ctx]` parameter through [`FromToolContext`] (row 3 of the rule).
    pub fn context_value<T: FromToolContext>(&self, index: usize) -> Result<T, ToolError> {
        T::from_tool_context(&self.ctx).map_err(|rejection| {
            let (name, ty) = self
                .param(index)
                .map(|p| (p.name.to_string(), p.rust_type))
                .unwrap_or_default();
            ToolError::new(
                ToolErrorKind::MissingContext,
                format!(
                    "tool `{}` is not configured correctly and could not run",
                    self.plan.tool
                ),
            )
            .with_detail(format!(
                "tool `{}`: #[ctx] parameter `{name}: {ty}` found no `{}` in the call, agent or toolkit context; {}",
                self.plan.tool, rejection.missing, rejection.hint
            ))
        })
    }

    /// Apply the precedence rule key by key and report every problem (the thorough path);
    /// for tools that do not parse their own arguments, also check the model's values against
    /// the input schema (`validate` feature). Done by the toolkit before the tool runs, except
    /// for `#[tool]`-generated tools, which try [`fast`](Self::fast) first and call this only
    /// when it fails.
    pub fn resolve_slots(&mut self) -> Result<(), ToolError> {
        if !self.resolved {
            let slots = collect_slots(&self.plan, &self.text, &self.policy)?;
            let problems = schema_problems(&self.plan, &self.text, &slots)?;
            if !problems.is_empty() {
                return Err(combine(
                    &self.plan.tool,
                    problems,
                    ToolErrorKind::InvalidArguments,
                ));
            }
            self.slots = slots;
            self.resolved = true;
        }
        Ok(())
    }

    /// Arguments not yet resolved: the size checked, an empty text read as `{}`.
    fn unresolved(
        plan: &Arc<ParamPlan>,
        text: String,
        ctx: ToolContext,
        policy: &ArgPolicy,
    ) -> Result<ToolArgs, ToolError> {
        check_size(&plan.tool, &text, policy)?;
        let text = if text.trim().is_empty() {
            "{}".to_string()
        } else {
            text
        };
        Ok(ToolArgs {
            text,
            slots: Slots::new(),
            resolved: false,
            plan: plan.clone(),
            policy: *policy,
            ctx,
        })
    }

    /// Check everything the tool would check before running: names, hidden and unknown
    /// arguments, missing values, and the type of every value present. Used where arguments
    /// must be known good before the tool runs (approval, background submission).
    pub fn validate(&mut self) -> Result<(), ToolError> {
        self.resolve_slots()?;
        let problems = type_problems(&self.plan, &self.text, &self.slots);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(combine(
                &self.plan.tool,
                problems,
                ToolErrorKind::InvalidArguments,
            ))
        }
    }

    /// Replace the argument text (an approver's edit) and [`validate`](Self::validate) it. On
    /// error the arguments are left as they were.
    pub fn replace_arguments(&mut self, text: String) -> Result<(), ToolError> {
        let mut edited = ToolArgs::unresolved(&self.plan, text, self.ctx.clone(), &self.policy)?;
        edited.validate()?;
        *self = edited;
        Ok(())
    }

    /// The one-pass path: parse the argument object straight into `sink`, one typed value per
    /// parameter, then fill absent ones from the registration's bindings. Returns `false` on
    /// anything irregular — a hidden or unknown key under the reject policy, a repeated key, a
    /// type mismatch, a missing required value — and the caller then takes the thorough path
    /// ([`resolve_slots`](Self::resolve_slots) and [`value`](Self::value)) to describe it.
    pub fn fast<S: ArgSink>(&self, sink: &mut S) -> bool {
        let plan = &*self.plan;
        // Already resolved (the toolkit did it up front): the slots are the answer.
        if self.resolved || plan.dynamic || plan.params.len() > 64 {
            return false;
        }
        let visitor = FastVisitor {
            plan,
            policy: &self.policy,
            sink: &mut *sink,
            seen: 0,
        };
        let mut de = serde_json::Deserializer::from_str(&self.text);
        if visitor
            .deserialize(&mut de)
            .and_then(|()| de.end())
            .is_err()
        {
            return false;
        }
        plan.params.iter().enumerate().all(|(i, p)| {
            if !p.kind.is_json() || sink.present(i) {
                return true;
            }
            match &p.binding {
                Some(raw) => sink.bind(i, raw.get()),
                None => p.kind != ParamKind::Required && p.kind != ParamKind::Preset,
            }
        })
    }

    /// Replace the context the tool will see (background jobs get the toolkit's shutdown token).
    pub(crate) fn set_context(&mut self, ctx: ToolContext) {
        self.ctx = ctx;
    }

    /// The context of this call (layers, call info, cancellation, progress).
    pub fn context(&self) -> &ToolContext {
        &self.ctx
    }

    /// The model's argument object as JSON text (`{}` when it sent nothing). For tools that
    /// declare an [`input_schema`](crate::ToolSpec::input_schema) instead of parameters.
    pub fn raw(&self) -> &str {
        &self.text
    }

    /// The name of the tool this call is for.
    pub fn tool_name(&self) -> &str {
        &self.plan.tool
    }

    fn param(&self, index: usize) -> Result<&PlannedParam, ToolError> {
        self.plan.params.get(index).ok_or_else(|| {
            ToolError::execution("internal error: tool parameter index out of range").with_detail(
                format!("tool `{}` asked for parameter #{index}", self.plan.tool),
            )
        })
    }
}

/// Why a JSON value does not fit a parameter's type: where inside the value, and what serde said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeMismatch {
    /// Path inside the value (`.` for the value itself), as serde_path_to_error prints it.
    pub path: String,
    /// What was wrong and what was expected, in serde's words.
    pub message: String,
}

impl TypeMismatch {
    /// "argument `days`: invalid type: string \"x\", expected u32", with the path inside
    /// the value appended to the name for nested values.
    pub fn describe(&self, param: &str) -> String {
        if self.path == "." {
            format!("argument `{param}`: {}", self.message)
        } else {
            let path = self.path.trim_start_matches('.');
            let dot = if path.starts_with('[') { "" } else { "." };
            format!("argument `{param}{dot}{path}`: {}", self.message)
        }
    }
}

impl fmt::Display for TypeMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path == "." {
            f.write_str(&self.message)
        } else {
            write!(f, "at `{}`: {}", self.path, self.message)
        }
    }
}

/// Deserialize one parameter value, reporting where inside it a mismatch is.
pub fn deserialize<T: DeserializeOwned>(text: &str) -> Result<T, TypeMismatch> {
    // Fast path without path tracking; on failure, parse again to say where it failed.
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.inner();
        // The position is inside one argument's slice, which means nothing to the model.
        let position = format!(" at line {} column {}", inner.line(), inner.column());
        let message = inner.to_string();
        TypeMismatch {
            path: e.path().to_string(),
            message: message
                .strip_suffix(&position)
                .unwrap_or(&message)
                .to_string(),
        }
    })
}

/// Collects every argument error of one call so the model hears about all of them at once.
#[doc(hidden)]
#[derive(Default)]
pub struct ArgErrors(Vec<ToolError>);

impl ArgErrors {
    /// Keep the value, or remember the error.
    pub fn take<T>(&mut self, result: Result<T, ToolError>) -> Option<T> {
        result.map_err(|e| self.0.push(e)).ok()
    }

    /// The combined error. The most serious kind wins (configuration before argument errors).
    pub fn into_error(self, tool: &str) -> ToolError {
        if let Some(ctx_err) = self
            .0
            .iter()
            .find(|e| e.kind() == ToolErrorKind::MissingContext)
        {
            return ctx_err.clone();
        }
        combine(
            tool,
            self.0.iter().map(|e| e.message().to_string()).collect(),
            ToolErrorKind::InvalidArguments,
        )
    }
}

fn combine(tool: &str, problems: Vec<String>, kind: ToolErrorKind) -> ToolError {
    ToolError::new(
        kind,
        format!(
            "invalid arguments for tool `{tool}`: {}",
            problems.join("; ")
        ),
    )
}

/// Apply the precedence rule to one call's argument text. See the module docs.
pub(crate) fn resolve(
    plan: &Arc<ParamPlan>,
    text: String,
    ctx: ToolContext,
    policy: &ArgPolicy,
) -> Result<ToolArgs, ToolError> {
    let mut args = ToolArgs::unresolved(plan, text, ctx, policy)?;
    // Tools generated by `#[tool]` parse in one pass themselves (`ToolArgs::fast`) and come
    // back here only to explain a failure; every other tool gets resolved slots up front.
    if !plan.self_parsing {
        args.resolve_slots()?;
    }
    Ok(args)
}

/// What the tool's input schema says about the model's values (see [`validate`]); an error
/// when the schema cannot be used.
fn schema_problems(plan: &ParamPlan, text: &str, slots: &[Slot]) -> Result<Vec<String>, ToolError> {
    let Some(schema) = &plan.schema else {
        return Ok(Vec::new());
    };
    let values = plan
        .params
        .iter()
        .zip(slots)
        .filter_map(|(param, slot)| match (*slot, param.check) {
            (Slot::Model(start, end), None) => {
                Some((&*param.name, &text[start as usize..end as usize]))
            }
            _ => None,
        })
        .collect();
    validate::check(
        schema,
        validate::Target {
            tool: &plan.tool,
            text,
            values,
        },
    )
}

/// The type mismatches of the model's values, described per parameter.
fn type_problems(plan: &ParamPlan, text: &str, slots: &[Slot]) -> Vec<String> {
    plan.params
        .iter()
        .zip(slots)
        .filter_map(|(param, slot)| match (*slot, param.check) {
            (Slot::Model(start, end), Some(check)) => check(&text[start as usize..end as usize])
                .err()
                .map(|e| e.describe(&param.name)),
            _ => None,
        })
        .collect()
}

fn check_size(tool: &str, text: &str, policy: &ArgPolicy) -> Result<(), ToolError> {
    let limit = policy.max_bytes.min(u32::MAX as usize);
    if text.len() > limit {
        return Err(ToolError::invalid_arguments(format!(
            "the arguments for tool `{tool}` are {} bytes; the limit is {limit} bytes",
            text.len()
        )));
    }
    Ok(())
}

/// The slow, thorough path: every key into its slot, every problem found and described.
fn collect_slots(plan: &ParamPlan, text: &str, policy: &ArgPolicy) -> Result<Slots, ToolError> {
    let tool = &*plan.tool;
    let mut slots: Slots = vec![Slot::Absent; plan.params.len()];
    let mut problems = Vec::new();
    let mut hidden = Vec::new();
    let collect = Collect {
        plan,
        policy,
        base: text.as_ptr() as usize,
        slots: &mut slots,
        problems: &mut problems,
        hidden: &mut hidden,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    if let Err(e) = collect.deserialize(&mut de).and_then(|()| de.end()) {
        return Err(ToolError::invalid_arguments(format!(
            "the arguments for tool `{tool}` must be a JSON object: {e}"
        )));
    }

    if !hidden.is_empty() {
        let list = hidden
            .iter()
            .map(|h| format!("`{h}`"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(ToolError::new(
            ToolErrorKind::HiddenArgument,
            format!(
                "tool `{tool}` does not accept {list} from the model: it is set by the application; call the tool again without it"
            ),
        ));
    }

    for (param, slot) in plan.params.iter().zip(slots.iter_mut()) {
        if *slot != Slot::Absent || !param.kind.is_json() {
            continue;
        }
        if param.binding.is_some() {
            *slot = Slot::Bound;
        } else if param.kind == ParamKind::Required {
            problems.push(format!("missing required argument `{}`", param.name));
        } else if param.kind == ParamKind::Preset {
            // `build()` refuses unbound presets, so this only happens for hand-made plans.
            return Err(ToolError::new(
                ToolErrorKind::MissingContext,
                format!("tool `{tool}` is not configured correctly and could not run"),
            )
            .with_detail(format!(
                "tool `{tool}`: #[preset] parameter `{}: {}` has no bound value",
                param.name, param.rust_type
            )));
        }
    }

    if !problems.is_empty() {
        // Only on the failure path: type-check the values that are present too, so the model
        // hears about every problem in one round trip. (A schema that cannot be used is
        // reported once the arguments are otherwise right.)
        problems.extend(type_problems(plan, text, &slots));
        problems.extend(schema_problems(plan, text, &slots).unwrap_or_default());
        if plan.params.iter().any(|p| !p.hidden && p.kind.is_json()) {
            let expected = plan
                .params
                .iter()
                .filter(|p| !p.hidden && p.kind.is_json())
                .map(|p| match p.kind {
                    ParamKind::Required => format!("`{}` (required)", p.name),
                    _ => format!("`{}`", p.name),
                })
                .collect::<Vec<_>>()
                .join(", ");
            problems.push(format!("the parameters are: {expected}"));
        } else {
            problems.push("this tool takes no arguments: send {}".into());
        }
        return Err(combine(tool, problems, ToolErrorKind::InvalidArguments));
    }
    Ok(slots)
}

/// Reads the top level of an argument object straight into the slots: values stay raw slices
/// of the text (no `Value` tree, no intermediate list).
struct Collect<'p> {
    plan: &'p ParamPlan,
    policy: &'p ArgPolicy,
    base: usize,
    slots: &'p mut Slots,
    problems: &'p mut Vec<String>,
    hidden: &'p mut Vec<String>,
}

impl Collect<'_> {
    fn accept(&mut self, key: Cow<'_, str>, value: &RawValue) {
        let plan = self.plan;
        if plan.dynamic {
            return;
        }
        let Some(index) = plan.params.iter().position(|p| p.name == *key) else {
            if self.policy.unknown == UnknownArgs::Reject {
                self.problems.push(format!("unknown argument `{key}`"));
            }
            return;
        };
        if plan.params[index].hidden {
            match self.policy.hidden {
                HiddenArgs::Reject => self.hidden.push(key.into_owned()),
                HiddenArgs::Ignore => tracing::warn!(
                    tool = &*plan.tool,
                    parameter = %key,
                    "the model sent a value for a hidden parameter; ignored"
                ),
            }
            return;
        }
        if self.slots[index] != Slot::Absent {
            self.problems
                .push(format!("argument `{key}` is given twice"));
            return;
        }
        // OpenAI strict mode makes every optional parameter required-but-nullable, so an
        // explicit `null` for a parameter the model may omit means "omitted".
        if value.get() == "null" && plan.params[index].kind != ParamKind::Required {
            return;
        }
        // In range: `resolve` refuses texts longer than `u32::MAX`.
        let start = (value.get().as_ptr() as usize - self.base) as u32;
        self.slots[index] = Slot::Model(start, start + value.get().len() as u32);
    }
}

impl<'de> DeserializeSeed<'de> for Collect<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Collect<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object of named arguments")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let value: &'de RawValue = map.next_value()?;
            self.accept(key.0, value);
        }
        Ok(())
    }
}

/// Typed storage for one tool's JSON parameters, filled by [`ToolArgs::fast`]. `#[tool]`
/// generates one per tool; an `Option` per parameter.
pub trait ArgSink {
    /// Deserialize the value of parameter `index` (signature position) from `map`.
    fn accept<'de, A: MapAccess<'de>>(&mut self, index: usize, map: &mut A)
    -> Result<(), A::Error>;
    /// Whether parameter `index` has a value.
    fn present(&self, index: usize) -> bool;
    /// Fill parameter `index` from a registration binding (JSON text); `false` if it does not fit.
    fn bind(&mut self, index: usize, json: &str) -> bool;
}

struct FastVisitor<'p, S> {
    plan: &'p ParamPlan,
    policy: &'p ArgPolicy,
    sink: &'p mut S,
    seen: u64,
}

impl<'de, S: ArgSink> DeserializeSeed<'de> for FastVisitor<'_, S> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, S: ArgSink> Visitor<'de> for FastVisitor<'_, S> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object of named arguments")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        // Errors here only say "take the thorough path"; their text is never shown.
        let irregular = || de::Error::custom("irregular arguments");
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let Some(index) = self.plan.params.iter().position(|p| p.name == *key.0) else {
                if self.policy.unknown == UnknownArgs::Reject {
                    return Err(irregular());
                }
                map.next_value::<de::IgnoredAny>()?;
                continue;
            };
            let param = &self.plan.params[index];
            if param.hidden {
                if self.policy.hidden == HiddenArgs::Reject {
                    return Err(irregular());
                }
                tracing::warn!(
                    tool = &*self.plan.tool,
                    parameter = %key.0,
                    "the model sent a value for a hidden parameter; ignored"
                );
                map.next_value::<de::IgnoredAny>()?;
                continue;
            }
            if self.seen & (1 << index) != 0 {
                return Err(irregular());
            }
            self.seen |= 1 << index;
            self.sink.accept(index, &mut map)?;
        }
        Ok(())
    }
}

/// A key, borrowed from the input unless it contained escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an argument name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}
