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
//!
//! **Arguments a small model can fix.** When a call's arguments fail, two things happen, both
//! only then (valid arguments never pay for them). First, if lossless coercion is on
//! ([`ToolkitBuilder::coerce_arguments`](crate::toolkit::ToolkitBuilder::coerce_arguments),
//! the default), a quoted scalar is read as the value the shown schema asks for — `"7"` as `7`
//! for an integer, `"2.5"` for a number, `"true"` for a boolean, inside objects and arrays too —
//! only when the text is exactly that value and the schema allows nothing else there, and never
//! for a hidden parameter; the coerced text runs only if it then passes every check (see
//! `coerce`). Second, an error that remains ends with one valid example call built from the
//! shown schema (`...; a valid call: {"city": "text", "days": 1}`: required properties only,
//! from `enum`, `default` or `examples` where given, checked against the schema with the
//! `validate` feature, left out when longer than 300 bytes or not certain to be valid).

mod coerce;
mod example;
mod fast;
mod policy;
mod resolve;
pub(crate) mod schema;

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::de::DeserializeOwned;
use serde_json::Value;

pub(crate) use fast::ArgSink;
pub use policy::{ArgPolicy, DEFAULT_MAX_ARGUMENT_BYTES, HiddenArgs, UnknownArgs};
use resolve::{check, check_size};
pub(crate) use resolve::{combine, resolve};

use crate::context::{FromToolContext, ToolContext};
use crate::error::{ToolError, ToolErrorKind};
use crate::param::{self, PlannedParam};
use schema::{ArgSchema, Needs};

/// `text` (a model's arguments) without the values it gives for `plan`'s hidden parameters.
pub(crate) fn without_hidden<'a>(plan: &ParamPlan, text: &'a str) -> std::borrow::Cow<'a, str> {
    use std::borrow::Cow;
    let mut hidden = plan.params.iter().filter(|p| p.hidden).peekable();
    if hidden.peek().is_none() {
        return Cow::Borrowed(text);
    }
    let Ok(mut object) = serde_json::from_str::<serde_json::Map<String, Value>>(text) else {
        return Cow::Borrowed(text);
    };
    let before = object.len();
    for param in hidden {
        object.remove(&*param.name);
    }
    if object.len() == before {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(Value::Object(object).to_string())
    }
}

/// The parameters of one registration, in declaration order.
#[derive(Clone, Debug)]
pub(crate) struct ParamPlan {
    pub(crate) tool: Arc<str>,
    pub(crate) params: Vec<PlannedParam>,
    /// The tool takes its argument object whole (no declared parameters).
    pub(crate) dynamic: bool,
    /// The tool parses its own arguments (see [`ToolSpec::self_parsing`](crate::tool::ToolSpec)).
    pub(crate) self_parsing: bool,
    /// The compiled input schema, for tools that do not parse their own arguments (see
    /// [`schema`]); `None` when nothing needs checking.
    pub(crate) schema: Option<Arc<ArgSchema>>,
    /// The input schema the model was shown (hidden parameters are not in it), read only when
    /// a call's arguments failed: to coerce them and to build the example call of the error.
    /// `None` for plans made by hand.
    pub(crate) shown: Option<Arc<Value>>,
    /// The example call of this tool's invalid-arguments errors, built on the first one.
    pub(crate) example: OnceLock<Option<Box<str>>>,
}

impl ParamPlan {
    /// Which schema check the tool's arguments need: none when it parses its own arguments
    /// or every visible parameter has a type check.
    pub(crate) fn needs(&self) -> Needs {
        if self.self_parsing {
            Needs::Nothing
        } else if self.dynamic {
            Needs::Whole
        } else if self
            .params
            .iter()
            .any(|p| p.kind.is_json() && !p.hidden && p.check.is_none())
        {
            Needs::Params
        } else {
            Needs::Nothing
        }
    }

    /// One valid call, built from the shown schema once (see [`example`]).
    fn example_call(&self) -> Option<&str> {
        self.example
            .get_or_init(|| {
                self.shown
                    .as_deref()
                    .and_then(example::example)
                    .map(String::into_boxed_str)
            })
            .as_deref()
    }
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
    /// The arguments as the model wrote them, without any value it gave for a hidden
    /// parameter: what a span records when content is on. Preset and context values are
    /// never in the text.
    pub(crate) fn recorded_text(&self) -> std::borrow::Cow<'_, str> {
        without_hidden(&self.plan, &self.text)
    }

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
        param::deserialize(text)
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

    /// Apply the precedence rule key by key and report every problem (the thorough path),
    /// including the type of every value present; for tools that do not parse their own
    /// arguments, also check the model's values against the input schema (`validate`
    /// feature). Done by the toolkit before the tool runs, except for `#[tool]`-generated
    /// tools, which try [`fast`](Self::fast) first and call this only when it fails.
    ///
    /// When the arguments fail and lossless coercion is on (the toolkit's
    /// [`coerce_arguments`](crate::toolkit::ToolkitBuilder::coerce_arguments), the default),
    /// they are checked once more with the model's quoted scalars read as the values the
    /// schema asks for (`"7"` → `7`); if that text passes, it becomes the arguments (see
    /// [`raw`](Self::raw)). An error that remains ends with one valid example call.
    pub fn resolve_slots(&mut self) -> Result<(), ToolError> {
        if self.resolved {
            return Ok(());
        }
        let error = match check(&self.plan, &self.text, &self.policy) {
            Ok(slots) => {
                self.settle(slots);
                return Ok(());
            }
            Err(error) => error,
        };
        if error.kind() == ToolErrorKind::InvalidArguments
            && let Some(coerced) = self.coerced()
            && let Ok(slots) = check(&self.plan, &coerced.text, &self.policy)
        {
            self.trace_coercion(&coerced.changed);
            self.text = coerced.text;
            self.settle(slots);
            return Ok(());
        }
        Err(self.explain(error))
    }

    fn settle(&mut self, slots: Slots) {
        self.slots = slots;
        self.resolved = true;
    }

    /// The argument text with the model's quoted scalars coerced where the shown schema asks
    /// unambiguously for an integer, number or boolean (see the module docs); `None` when
    /// coercion is off or nothing changes. Hidden parameters are never touched.
    pub(crate) fn coerced(&self) -> Option<coerce::Coerced> {
        if !self.policy.coerce {
            return None;
        }
        let schema = self.plan.shown.as_deref()?;
        let plan = &self.plan;
        coerce::coerce(schema, &self.text, &|key| {
            plan.params.iter().any(|p| p.hidden && p.name == key)
        })
    }

    /// Record that the arguments ran as coerced.
    pub(crate) fn trace_coercion(&self, changed: &[String]) {
        tracing::debug!(
            target: "agent_toolkit::args",
            tool = &*self.plan.tool,
            arguments = %changed.join(", "),
            "the model's quoted values were read as the integers, numbers or booleans the schema asks for"
        );
    }

    /// `error` as the model should read it: an invalid-arguments error ends with one valid
    /// example call built from the schema it was shown, when one can be built for certain.
    pub(crate) fn explain(&self, error: ToolError) -> ToolError {
        if error.kind() != ToolErrorKind::InvalidArguments {
            return error;
        }
        match self.plan.example_call() {
            Some(example) => error.append_message(&format!("; a valid call: {example}")),
            None => error,
        }
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
    /// arguments, missing values, and the type of every value present (with the same
    /// coercion as [`resolve_slots`](Self::resolve_slots)). Used where arguments must be known
    /// good before the tool runs (approval, background submission).
    pub fn validate(&mut self) -> Result<(), ToolError> {
        self.resolve_slots()
    }

    /// Replace the argument text (an approver's edit) and [`validate`](Self::validate) it. On
    /// error the arguments are left as they were.
    pub fn replace_arguments(&mut self, text: String) -> Result<(), ToolError> {
        let mut edited = ToolArgs::unresolved(&self.plan, text, self.ctx.clone(), &self.policy)?;
        edited.validate()?;
        *self = edited;
        Ok(())
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
    /// declare an [`input_schema`](crate::tool::ToolSpec::input_schema) instead of parameters.
    ///
    /// After a lossless coercion (see [`resolve_slots`](Self::resolve_slots)) this is the
    /// coerced text: the tool's values are read from it, so a tool that parses it itself gets
    /// what the schema promised (`{"id": 7}` where the model wrote `{"id": "7"}`).
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
