//! Tool names each provider accepts, and a bidirectional map from toolkit names to them.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::Dialect;

/// Longest name the dialect accepts.
fn max_len(dialect: Dialect) -> usize {
    match dialect {
        Dialect::OpenAiStrict | Dialect::OpenAi | Dialect::Anthropic => 64,
        // Vertex counts the 64 differently from the Developer API; 63 is safe for both.
        Dialect::Gemini => 63,
        Dialect::Mcp => 128,
    }
}

fn allowed(dialect: Dialect, c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || (dialect == Dialect::Mcp && c == '.')
}

/// Vertex requires a Gemini name to start with a letter or underscore.
fn allowed_first(dialect: Dialect, c: char) -> bool {
    dialect != Dialect::Gemini || c.is_ascii_alphabetic() || c == '_'
}

fn is_valid(dialect: Dialect, name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| allowed(dialect, first) && allowed_first(dialect, first))
        && chars.all(|c| allowed(dialect, c))
        && name.len() <= max_len(dialect)
}

pub(super) fn sanitize(dialect: Dialect, name: &str) -> Cow<'_, str> {
    if is_valid(dialect, name) {
        return Cow::Borrowed(name);
    }
    let mut out: String = name
        .chars()
        .map(|c| if allowed(dialect, c) { c } else { '_' })
        .collect();
    if out
        .chars()
        .next()
        .is_none_or(|first| !allowed_first(dialect, first))
    {
        out.insert(0, '_');
    }
    // Only ASCII is left, so byte length is character length.
    out.truncate(max_len(dialect));
    Cow::Owned(out)
}

/// Sanitised names for a set of tool names with a reverse map; collisions after sanitising
/// get a deterministic suffix (`_2`, `_3`, ...), still within the length limit.
///
/// Names that are already valid keep their exact spelling, whatever their position in the
/// input; the others are assigned in input order. A repeated input name is mapped once.
#[derive(Clone, Debug)]
pub struct NameMap {
    dialect: Dialect,
    /// `(original, wire)` in input order.
    pairs: Vec<(String, String)>,
    by_original: HashMap<String, usize>,
    by_wire: HashMap<String, usize>,
}

impl NameMap {
    /// Wire names for `names` in `dialect`.
    pub fn new<'a>(dialect: Dialect, names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut originals: Vec<&str> = Vec::new();
        let mut seen = HashSet::new();
        for name in names {
            if seen.insert(name) {
                originals.push(name);
            }
        }
        // Valid names first, so that an invalid name sanitising to one of them is the one
        // that gets a suffix, not the name a user already sees on the wire.
        let mut taken: HashSet<String> = originals
            .iter()
            .filter(|name| is_valid(dialect, name))
            .map(|name| (*name).to_owned())
            .collect();
        let mut pairs = Vec::with_capacity(originals.len());
        for original in originals {
            let wire = if is_valid(dialect, original) {
                original.to_owned()
            } else {
                let wire = unique(dialect, &sanitize(dialect, original), &taken);
                taken.insert(wire.clone());
                wire
            };
            pairs.push((original.to_owned(), wire));
        }
        let by_original = pairs
            .iter()
            .enumerate()
            .map(|(i, (original, _))| (original.clone(), i))
            .collect();
        let by_wire = pairs
            .iter()
            .enumerate()
            .map(|(i, (_, wire))| (wire.clone(), i))
            .collect();
        NameMap {
            dialect,
            pairs,
            by_original,
            by_wire,
        }
    }

    /// The dialect the wire names are valid for.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Wire name for an original name.
    pub fn wire_name(&self, original: &str) -> Option<&str> {
        let &index = self.by_original.get(original)?;
        Some(self.pairs[index].1.as_str())
    }

    /// Original name for a wire name (the reverse map).
    pub fn original_name(&self, wire: &str) -> Option<&str> {
        let &index = self.by_wire.get(wire)?;
        Some(self.pairs[index].0.as_str())
    }

    /// `(original, wire)` pairs in input order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(o, w)| (o.as_str(), w.as_str()))
    }
}

/// `base`, or `base` shortened and suffixed with `_N` for the smallest `N >= 2` not taken.
fn unique(dialect: Dialect, base: &str, taken: &HashSet<String>) -> String {
    if !taken.contains(base) {
        return base.to_owned();
    }
    (2usize..)
        .map(|n| {
            let suffix = format!("_{n}");
            let keep = max_len(dialect)
                .saturating_sub(suffix.len())
                .min(base.len());
            format!("{}{suffix}", &base[..keep])
        })
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or_else(|| base.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_are_borrowed() {
        for dialect in Dialect::ALL {
            assert!(matches!(
                sanitize(dialect, "get_weather-2"),
                Cow::Borrowed(_)
            ));
        }
        assert!(matches!(
            sanitize(Dialect::Mcp, "fs.read"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn invalid_characters_become_underscores() {
        assert_eq!(sanitize(Dialect::OpenAi, "fs.read file"), "fs_read_file");
        assert_eq!(sanitize(Dialect::Anthropic, "météo"), "m_t_o");
        assert_eq!(sanitize(Dialect::Mcp, "fs.read file"), "fs.read_file");
        assert_eq!(sanitize(Dialect::OpenAiStrict, "a/b:c"), "a_b_c");
    }

    #[test]
    fn empty_name_becomes_underscore() {
        for dialect in Dialect::ALL {
            assert_eq!(sanitize(dialect, ""), "_");
        }
    }

    #[test]
    fn long_names_are_truncated() {
        let long = "x".repeat(200);
        assert_eq!(sanitize(Dialect::OpenAi, &long).len(), 64);
        assert_eq!(sanitize(Dialect::Gemini, &long).len(), 63);
        assert_eq!(sanitize(Dialect::Mcp, &long).len(), 128);
        assert!(matches!(
            sanitize(Dialect::Mcp, &long[..128]),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn gemini_names_start_with_letter_or_underscore() {
        assert_eq!(sanitize(Dialect::Gemini, "2fa_check"), "_2fa_check");
        assert_eq!(sanitize(Dialect::Gemini, "-x"), "_-x");
        assert_eq!(sanitize(Dialect::Gemini, ".x"), "_x");
        assert_eq!(sanitize(Dialect::OpenAi, "2fa_check"), "2fa_check");
        let long = format!("9{}", "y".repeat(100));
        let out = sanitize(Dialect::Gemini, &long);
        assert_eq!(out.len(), 63);
        assert!(out.starts_with("_9"));
    }

    #[test]
    fn collisions_get_suffixes_and_valid_names_win() {
        let map = NameMap::new(Dialect::OpenAi, ["a.b", "a b", "a_b", "a_b_2", "c"]);
        assert_eq!(map.wire_name("a_b"), Some("a_b"));
        assert_eq!(map.wire_name("a_b_2"), Some("a_b_2"));
        assert_eq!(map.wire_name("a.b"), Some("a_b_3"));
        assert_eq!(map.wire_name("a b"), Some("a_b_4"));
        assert_eq!(map.wire_name("c"), Some("c"));
        assert_eq!(map.wire_name("missing"), None);
    }

    #[test]
    fn suffixes_respect_the_length_limit() {
        let a = format!("{}.", "n".repeat(70));
        let b = format!("{}:", "n".repeat(70));
        let map = NameMap::new(Dialect::OpenAi, [a.as_str(), b.as_str()]);
        let wa = map.wire_name(&a).unwrap_or_default();
        let wb = map.wire_name(&b).unwrap_or_default();
        assert_eq!(wa, "n".repeat(64));
        assert_eq!(wb, format!("{}_2", "n".repeat(62)));
        assert!(is_valid(Dialect::OpenAi, wb));
    }

    #[test]
    fn reverse_map_round_trips() {
        let names = ["fs.read", "fs read", "fs_read", "", "é", "ok"];
        for dialect in Dialect::ALL {
            let map = NameMap::new(dialect, names);
            let mut wires = HashSet::new();
            for name in names {
                let wire = map.wire_name(name).unwrap_or_default();
                assert!(is_valid(dialect, wire), "{dialect:?}: {wire:?}");
                assert!(
                    wires.insert(wire.to_owned()),
                    "{dialect:?}: duplicate {wire:?}"
                );
                assert_eq!(map.original_name(wire), Some(name));
            }
            assert_eq!(map.iter().count(), names.len());
            assert_eq!(map.dialect(), dialect);
        }
    }

    #[test]
    fn duplicate_inputs_map_once_and_order_is_deterministic() {
        let a = NameMap::new(Dialect::Gemini, ["x y", "x y", "x.y"]);
        let b = NameMap::new(Dialect::Gemini, ["x y", "x.y"]);
        assert_eq!(a.iter().collect::<Vec<_>>(), b.iter().collect::<Vec<_>>());
        assert_eq!(a.wire_name("x.y"), Some("x_y_2"));
    }
}
