//! `#[tool(...)]` and `#[tools(...)]`: which options exist and the shape of each value.

use proc_macro2::TokenStream;
use syn::{Lit, LitStr, Path};

use super::{Entry, Opt, Seen, entries};
use crate::errors::Errors;

/// The flags of `#[tool(...)]`. Each is `flag`, `flag = true` or `flag = false`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flag {
    ReadOnly,
    Idempotent,
    Destructive,
    Sequential,
    Background,
    RequiresApproval,
    DeferLoading,
}

impl Flag {
    const ALL: [Flag; 7] = [
        Flag::ReadOnly,
        Flag::Idempotent,
        Flag::Destructive,
        Flag::Sequential,
        Flag::Background,
        Flag::RequiresApproval,
        Flag::DeferLoading,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Flag::ReadOnly => "read_only",
            Flag::Idempotent => "idempotent",
            Flag::Destructive => "destructive",
            Flag::Sequential => "sequential",
            Flag::Background => "background",
            Flag::RequiresApproval => "requires_approval",
            Flag::DeferLoading => "defer_loading",
        }
    }
}

const TOOL_OPTIONS: &[&str] = &[
    "name",
    "description",
    "group",
    "read_only",
    "idempotent",
    "destructive",
    "sequential",
    "background",
    "requires_approval",
    "defer_loading",
    "timeout",
    "retries",
    "max_output_bytes",
    "crate",
];

/// `#[tool(...)]`.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub name: Option<Opt<LitStr>>,
    pub description: Option<Opt<LitStr>>,
    pub groups: Vec<LitStr>,
    flags: [Option<Opt<bool>>; 7],
    /// Milliseconds.
    pub timeout_ms: Option<Opt<u64>>,
    pub retries: Option<Opt<u32>>,
    pub max_output_bytes: Option<Opt<u64>>,
    pub krate: Option<Opt<Path>>,
}

impl ToolAttr {
    /// The flag's option, if it was written (whether `true` or `false`).
    pub(crate) fn flag(&self, flag: Flag) -> Option<&Opt<bool>> {
        self.flags[flag as usize].as_ref()
    }

    /// Whether the flag is on.
    pub(crate) fn is(&self, flag: Flag) -> bool {
        self.flag(flag).is_some_and(|f| f.value)
    }

    pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
        let mut attr = ToolAttr::default();
        let mut seen = Seen::default();
        for entry in entries(tokens, errors) {
            let key = entry.key.to_string();
            if !TOOL_OPTIONS.contains(&key.as_str()) {
                errors.at(
                    &entry.key,
                    format!(
                        "unknown #[tool] option `{key}`; expected one of: {}",
                        TOOL_OPTIONS.join(", ")
                    ),
                );
                continue;
            }
            if key != "group" && !seen.first(&entry.key, "#[tool]", errors) {
                continue;
            }
            if let Some(flag) = Flag::ALL.into_iter().find(|f| f.name() == key) {
                attr.flags[flag as usize] = entry.flag(errors).map(|v| entry.opt(v));
                continue;
            }
            match key.as_str() {
                "name" => {
                    attr.name = entry
                        .string(errors)
                        .filter(|s| tool_name(s, errors))
                        .map(|s| entry.opt(s))
                }
                "description" => attr.description = entry.string(errors).map(|s| entry.opt(s)),
                "group" => {
                    if let Some(group) = entry.string(errors) {
                        if group.value().is_empty() {
                            errors.at(&group, "a group name cannot be empty; name the group, e.g. `group = \"files\"`");
                        }
                        attr.groups.push(group);
                    }
                }
                "timeout" => {
                    attr.timeout_ms = entry.string(errors).and_then(|s| match parse_duration(&s.value()) {
                        Ok(ms) => Some(entry.opt(ms)),
                        Err(why) => {
                            errors.at(&s, format!("invalid timeout: {why}; write it like \"500ms\", \"30s\", \"2m\" or \"1h\""));
                            None
                        }
                    })
                }
                "retries" => attr.retries = entry.retries(errors).map(|n| entry.opt(n)),
                "max_output_bytes" => {
                    attr.max_output_bytes = entry.byte_count(errors).map(|n| entry.opt(n))
                }
                "crate" => attr.krate = entry.crate_path(errors).map(|p| entry.opt(p)),
                // The flags, handled above; every key is one of `TOOL_OPTIONS`.
                _ => {}
            }
        }
        attr
    }
}

/// `#[tools(...)]`.
#[derive(Default)]
pub(crate) struct ToolsAttr {
    pub krate: Option<Opt<Path>>,
}

impl ToolsAttr {
    pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> ToolsAttr {
        let mut attr = ToolsAttr::default();
        let mut seen = Seen::default();
        for entry in entries(tokens, errors) {
            if entry.key != "crate" {
                errors.at(
                    &entry.key,
                    format!(
                        "unknown #[tools] option `{}`: `#[tools]` takes only `crate = \"..\"`; put tool options on each `#[tool(...)]` method",
                        entry.key
                    ),
                );
            } else if seen.first(&entry.key, "#[tools]", errors) {
                attr.krate = entry.crate_path(errors).map(|p| entry.opt(p));
            }
        }
        attr
    }
}

impl Entry {
    fn retries(&self, errors: &mut Errors) -> Option<u32> {
        let hint = "expected `retries = N` with a whole number, e.g. `retries = 3`";
        match self.literal() {
            Some(Lit::Int(i)) => match i.base10_parse::<u32>() {
                Ok(n) => Some(n),
                Err(e) => {
                    errors.at(i, format!("{e}; {hint}"));
                    None
                }
            },
            _ => {
                errors.at(self.tokens(), hint);
                None
            }
        }
    }

    /// `max_output_bytes = N`: a positive whole number of bytes.
    fn byte_count(&self, errors: &mut Errors) -> Option<u64> {
        let hint = "expected `max_output_bytes = N` with a whole number of bytes above 0, e.g. `max_output_bytes = 16384`";
        match self.literal() {
            Some(Lit::Int(i)) => match i.base10_parse::<u64>() {
                Ok(0) => {
                    errors.at(
                        i,
                        format!("a budget of 0 bytes would hide every result; {hint}"),
                    );
                    None
                }
                Ok(n) => Some(n),
                Err(e) => {
                    errors.at(i, format!("{e}; {hint}"));
                    None
                }
            },
            _ => {
                errors.at(self.tokens(), hint);
                None
            }
        }
    }

    /// `crate = "path"`: the path to the runtime crate, as serde's `#[serde(crate = "..")]`.
    /// The path's tokens carry the literal's span, so a path that does not lead to the
    /// runtime is reported at the literal.
    fn crate_path(&self, errors: &mut Errors) -> Option<Path> {
        let hint = "write the path to agent_toolkit as a string, e.g. `crate = \"agent_toolkit\"` or `crate = \"my_crate::agent_toolkit\"`";
        match self.literal() {
            Some(Lit::Str(s)) => match s.parse_with(Path::parse_mod_style) {
                Ok(path) => Some(path),
                Err(_) => {
                    errors.at(s, format!("`{}` is not a path; {hint}", s.value()));
                    None
                }
            },
            _ => {
                errors.at(self.tokens(), format!("expected `crate = \"...\"`; {hint}"));
                None
            }
        }
    }
}

/// A tool name as models accept it.
fn tool_name(name: &LitStr, errors: &mut Errors) -> bool {
    let v = name.value();
    let ok = !v.is_empty()
        && v.len() <= 128
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !ok {
        errors.at(name, "a tool name must be 1 to 128 characters of letters, digits, `_`, `-` or `.` (models require `^[a-zA-Z0-9_-]{1,64}$`)");
    }
    ok
}

/// "500ms", "30s", "2m", "1h" (whole numbers) → milliseconds.
fn parse_duration(text: &str) -> Result<u64, String> {
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
