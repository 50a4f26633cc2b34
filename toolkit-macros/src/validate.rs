//! Every check that relates two or more things the user wrote, in one pass over the model:
//! signature shape against the tool contract, options against each other, parameters against
//! each other, tools of a `#[tools]` block against each other.
//!
//! Invariant: a model that passes is one code generation can expand without the compiler
//! finding a macro-made mistake; each problem is reported once, at the token to change (for a
//! conflict, the one written second), with what to do instead. Only real contradictions are
//! refused: `background` + `sequential` (the barrier orders the submission after the calls
//! before it) and `background` + `requires_approval` (the job asks for approval when it
//! starts) both mean something, so both are allowed.

use syn::{FnArg, ReceiverKind, Safety};

use crate::ast::{Place, ToolFn, ToolsBlock};
use crate::attr::{Flag, HiddenKind, Opt};
use crate::errors::Errors;
use crate::params::Param;

/// The checks of one tool function, free or a method.
pub(crate) fn tool(tool: &ToolFn, errors: &mut Errors) {
    signature(tool, errors);
    receiver(tool, errors);
    for param in &tool.params {
        hidden_param(param, errors);
    }
    wire_names(&tool.params, errors);
    description(tool, errors);
    flags(tool, errors);
}

/// The checks of a `#[tools]` block, including those of each of its tools.
pub(crate) fn tools(block: &ToolsBlock, errors: &mut Errors) {
    if let Some((path, _)) = &block.item.trait_ {
        errors.at(
            path,
            "`#[tools]` goes on an inherent `impl Type { .. }` block, not a trait impl; move the tool methods to an inherent impl",
        );
    }
    if !block.item.generics.params.is_empty() {
        errors.at(
            &block.item.generics,
            "`#[tools]` cannot be used on a generic impl: each tool needs one concrete schema; implement the tools for a concrete type",
        );
    }
    if block.tools.is_empty() {
        errors.at(
            block.self_ty(),
            "this `#[tools]` block has no `#[tool]` method; mark the methods the model may call with `#[tool]`",
        );
    }
    for (i, t) in block.tools.iter().enumerate() {
        tool(t, errors);
        if let Some(krate) = &t.attr.krate {
            errors.at(
                &krate.key,
                "`crate` applies to a whole `#[tools]` block: write it once as `#[tools(crate = \"..\")]` on the impl",
            );
        }
        if block.tools[..i].iter().any(|u| u.name == t.name) {
            let message = format!(
                "two tools of this block are named `{}`; give one another name with `#[tool(name = \"..\")]`",
                t.name
            );
            match &t.attr.name {
                Some(name) => errors.at(&name.value, message),
                None => errors.at(t.ident(), message),
            }
        }
    }
}

fn signature(tool: &ToolFn, errors: &mut Errors) {
    let sig = &tool.sig;
    if !sig.generics.params.is_empty() {
        errors.at(
            &sig.generics,
            "a tool cannot be generic: the model calls it with one concrete JSON schema; use concrete types, or write one `#[tool]` wrapper per type",
        );
    }
    if let Some(w) = &sig.generics.where_clause {
        errors.at(
            w,
            "a tool cannot have a `where` clause: it cannot be generic; remove the clause",
        );
    }
    if let Safety::Unsafe(u) = &sig.safety {
        errors.at(
            u,
            "a tool cannot be `unsafe fn`: the model would call it without upholding its contract; make the function safe and keep the `unsafe` block inside",
        );
    }
    if let Some(v) = &sig.variadic {
        errors.at(
            v,
            "a tool cannot be variadic: the model sends named arguments; take a `Vec<T>` instead",
        );
    }
}

fn receiver(tool: &ToolFn, errors: &mut Errors) {
    if tool.place != Place::Method {
        return;
    }
    let Some(FnArg::Receiver(r)) = tool.sig.inputs.first() else {
        errors.at(
            tool.ident(),
            "a `#[tool]` method in a `#[tools]` impl must take `&self`; move associated functions without `self` out and make them free `#[tool]` functions",
        );
        return;
    };
    match &r.kind {
        ReceiverKind::Reference(_, _, None) => {}
        ReceiverKind::Reference(_, _, Some(_)) => errors.at(
            r,
            "a tool method must take `&self`, not `&mut self`: calls may run in parallel; keep mutable state behind a Mutex or atomics",
        ),
        _ => errors.at(
            r,
            "a tool method must take `&self`: the value is shared behind an `Arc` by every call, so it cannot be moved or replaced; keep state in fields (use a Mutex for changes)",
        ),
    }
}

/// A hidden parameter is never shown to the model, so what only the model would see is a
/// mistake.
fn hidden_param(param: &Param, errors: &mut Errors) {
    let Some(kind) = param.attrs.hidden else {
        return;
    };
    let which = kind.attr();
    if let Some(default) = &param.attrs.default {
        errors.at(
            &default.value,
            format!("a `{which}` parameter is hidden from the model and cannot have a default; remove `default`"),
        );
    }
    if let Some(description) = &param.attrs.description {
        errors.at(
            &description.value,
            format!("a `{which}` parameter is hidden from the model, so a description would never be shown; use a `///` comment for readers instead"),
        );
    }
    if let (HiddenKind::Ctx, Some(rename)) = (kind, &param.attrs.rename) {
        errors.at(
            &rename.key,
            "a `#[ctx]` parameter is injected by type, so `rename` has no meaning for it; remove `rename`",
        );
    }
}

/// The model and `.preset(..)` find parameters by name, so names must be unique.
fn wire_names(params: &[Param], errors: &mut Errors) {
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.wire_name == p.wire_name) {
            let message = format!(
                "two parameters are named `{}` for the model; use `#[arg(rename = \"..\")]` on one",
                p.wire_name
            );
            match &p.attrs.rename {
                Some(rename) => errors.at(&rename.value, message),
                None => errors.at(&p.ident, message),
            }
        }
    }
}

fn description(tool: &ToolFn, errors: &mut Errors) {
    if !tool.description.is_empty() {
        return;
    }
    match &tool.attr.description {
        Some(d) => errors.at(
            &d.value,
            "a tool description cannot be empty: the model reads it to decide when to call the tool; say what the tool does",
        ),
        None => errors.at(
            tool.ident(),
            "a tool needs a description: the model reads it to decide when to call the tool; add a `///` doc comment or `#[tool(description = \"...\")]`",
        ),
    }
}

/// Pairs of flags that contradict each other; reported at the flag written second.
const CONTRADICTIONS: &[(Flag, Flag, &str)] = &[(
    Flag::ReadOnly,
    Flag::Destructive,
    "`read_only` says the tool changes nothing, `destructive` that it may destroy data; keep the one that is true",
)];

fn flags(tool: &ToolFn, errors: &mut Errors) {
    let on = |flag| tool.attr.flag(flag).filter(|f: &&Opt<bool>| f.value);
    for &(a, b, why) in CONTRADICTIONS {
        if let (Some(fa), Some(fb)) = (on(a), on(b)) {
            let (first, second) = if fa.order < fb.order {
                (fa, fb)
            } else {
                (fb, fa)
            };
            errors.at(
                &second.key,
                format!(
                    "a tool cannot be both `{}` and `{}`: {why}",
                    first.key, second.key
                ),
            );
        }
    }
}
