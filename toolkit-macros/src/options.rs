//! The grammar of `#[tool(...)]`: `name`, `description`, `group` (repeatable), the flags
//! `read_only`, `idempotent`, `destructive`, `sequential`, `background`, `requires_approval`,
//! and `timeout = "30s"`, `retries = N`. A repeated option is an error at its second use.

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, Lit, LitStr, Meta, Token};

use crate::errors::Errors;

const KNOWN: &str = "name, description, group, read_only, idempotent, destructive, sequential, background, requires_approval, timeout, retries";

#[derive(Default)]
pub(crate) struct ToolOptions {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub groups: Vec<LitStr>,
    pub read_only: bool,
    pub idempotent: bool,
    pub destructive: bool,
    pub sequential: bool,
    pub background: bool,
    pub requires_approval: bool,
    /// Milliseconds.
    pub timeout_ms: Option<u64>,
    pub retries: Option<u32>,
}

pub(crate) fn parse(attr: proc_macro2::TokenStream, errors: &mut Errors) -> ToolOptions {
    let mut opts = ToolOptions::default();
    if attr.is_empty() {
        return opts;
    }
    let metas =
        match syn::parse::Parser::parse2(Punctuated::<Meta, Token![,]>::parse_terminated, attr) {
            Ok(m) => m,
            Err(e) => {
                errors.push(e);
                return opts;
            }
        };
    let mut seen: Vec<String> = Vec::new();
    for meta in metas {
        let Some(ident) = meta.path().get_ident().map(|i| i.to_string()) else {
            errors.at(
                meta.path(),
                format!("unknown #[tool] option; expected one of: {KNOWN}"),
            );
            continue;
        };
        if ident != "group" && seen.contains(&ident) {
            errors.at(
                meta.path(),
                format!("duplicate #[tool] option `{ident}`; give it once"),
            );
            continue;
        }
        seen.push(ident.clone());
        match ident.as_str() {
            "name" => opts.name = string(&meta, errors).inspect(|s| check_name(s, errors)),
            "description" => opts.description = string(&meta, errors),
            "group" => {
                if let Some(g) = string(&meta, errors) {
                    if g.value().is_empty() {
                        errors.at(&g, "a group name cannot be empty");
                    }
                    opts.groups.push(g);
                }
            }
            "read_only" => opts.read_only = flag(&meta, errors),
            "idempotent" => opts.idempotent = flag(&meta, errors),
            "destructive" => opts.destructive = flag(&meta, errors),
            "sequential" => opts.sequential = flag(&meta, errors),
            "background" => opts.background = flag(&meta, errors),
            "requires_approval" => opts.requires_approval = flag(&meta, errors),
            "timeout" => {
                opts.timeout_ms = string(&meta, errors).and_then(|s| match parse_duration(&s.value()) {
                    Ok(ms) => Some(ms),
                    Err(why) => {
                        errors.at(&s, format!("invalid timeout: {why}; write it like \"500ms\", \"30s\", \"2m\" or \"1h\""));
                        None
                    }
                })
            }
            "retries" => opts.retries = integer(&meta, errors),
            other => errors.at(meta.path(), format!("unknown #[tool] option `{other}`; expected one of: {KNOWN}")),
        }
    }
    if opts.read_only && opts.destructive {
        errors.at_span(
            Span::call_site(),
            "a tool cannot be both `read_only` and `destructive`",
        );
    }
    opts
}

fn check_name(name: &LitStr, errors: &mut Errors) {
    let v = name.value();
    if v.is_empty()
        || v.len() > 128
        || !v
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        errors.at(name, "a tool name must be 1 to 128 characters of letters, digits, `_`, `-` or `.` (models require `^[a-zA-Z0-9_-]{1,64}$`)");
    }
}

fn value_lit(meta: &Meta) -> Option<&Lit> {
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit, .. }) => Some(lit),
            _ => None,
        },
        _ => None,
    }
}

fn string(meta: &Meta, errors: &mut Errors) -> Option<LitStr> {
    match value_lit(meta) {
        Some(Lit::Str(s)) => Some(s.clone()),
        _ => {
            let name = meta
                .path()
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            errors.at(meta, format!("expected `{name} = \"...\"`"));
            None
        }
    }
}

fn integer(meta: &Meta, errors: &mut Errors) -> Option<u32> {
    match value_lit(meta) {
        Some(Lit::Int(i)) => match i.base10_parse::<u32>() {
            Ok(v) => Some(v),
            Err(e) => {
                errors.push(e);
                None
            }
        },
        _ => {
            errors.at(
                meta,
                "expected `retries = N` with a whole number, e.g. `retries = 3`",
            );
            None
        }
    }
}

fn flag(meta: &Meta, errors: &mut Errors) -> bool {
    match meta {
        Meta::Path(_) => true,
        _ => match value_lit(meta) {
            Some(Lit::Bool(b)) => b.value,
            _ => {
                let name = meta
                    .path()
                    .get_ident()
                    .map(|i| i.to_string())
                    .unwrap_or_default();
                errors.at(
                    meta,
                    format!("`{name}` is a flag: write `{name}` or `{name} = true`"),
                );
                false
            }
        },
    }
}

/// "500ms", "30s", "2m", "1h" (whole numbers) → milliseconds.
pub(crate) fn parse_duration(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` does not start with a whole number"))?;
    let factor = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        "" => return Err(format!("`{text}` has no unit")),
        other => return Err(format!("unknown unit `{other}`")),
    };
    let ms = n
        .checked_mul(factor)
        .ok_or_else(|| format!("`{text}` is too long"))?;
    if ms == 0 {
        return Err("a timeout of zero would fail every call".into());
    }
    Ok(ms)
}
