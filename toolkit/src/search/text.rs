//! From text to index terms, the same for tools and queries: words (runs of ASCII letters and
//! digits, or of other-script characters), split at camelCase boundaries, ASCII-lowercased,
//! common English words dropped, and stemmed: by the Snowball English stemmer (the default), or
//! by the light suffix stemmer of `tests/search/METHOD.md` (plurals, `-ing`, `-ed`), which the
//! first benchmark chose.

/// How words become stems ([`SearchSettings::stemming`](super::SearchSettings::stemming)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stemming {
    /// Plurals and `-ing` / `-ed` stripped, a final `e` dropped (`tests/search/METHOD.md`).
    Light,
    /// The Snowball English stemmer (Porter 2), from the `rust-stemmers` crate.
    Snowball,
}

/// How words become terms: the stemmer of the index's settings.
#[derive(Clone, Copy)]
pub(super) struct Analyzer {
    stemming: Stemming,
}

impl Analyzer {
    pub(super) fn new(stemming: Stemming) -> Self {
        Analyzer { stemming }
    }

    /// Call `f` with each term of `text`, in order (repeats kept: they are term frequencies).
    ///
    /// Works on bytes: every rule looks at ASCII only, and a byte of a multi-byte character
    /// (`>= 0x80`) is part of a word like a letter, so words are never cut inside a character.
    pub(super) fn each_term(self, text: &str, f: impl FnMut(&str)) {
        self.each_term_with(text, &mut String::new(), f);
    }

    /// [`each_term`](Self::each_term) with a buffer for the term being made (reused across
    /// calls).
    pub(super) fn each_term_with(self, text: &str, buffer: &mut String, mut f: impl FnMut(&str)) {
        each_piece(text, |piece| {
            if self.term(piece, buffer) {
                f(buffer);
            }
        });
    }

    /// Call `f` with each word of `text` as written: what [`term`](Self::term) makes a term of
    /// (for callers that remember each written word's term).
    pub(super) fn each_written_word<'t>(self, text: &'t str, f: impl FnMut(&'t str)) {
        each_piece(text, f);
    }

    /// The term of `word` (one of [`each_written_word`](Self::each_written_word)'s) into
    /// `buffer`: lowercased and stemmed; `false` for a common word, which is no term.
    pub(super) fn term(self, word: &str, buffer: &mut String) -> bool {
        buffer.clear();
        buffer.push_str(word);
        buffer.make_ascii_lowercase();
        if is_stopword(buffer) {
            return false;
        }
        self.stem(buffer);
        true
    }

    /// Each word of `text` lowercased, common words included, not stemmed (for joining query
    /// words: "file system" may be a catalog's `filesystem`).
    pub(super) fn each_word(self, text: &str, mut f: impl FnMut(&str)) {
        let mut buffer = String::new();
        each_piece(text, |piece| {
            buffer.clear();
            buffer.push_str(piece);
            buffer.make_ascii_lowercase();
            f(&buffer);
        });
    }

    /// `word` (lowercase) as a term: stemmed, even if it is a common word.
    pub(super) fn stem(self, word: &mut String) {
        match self.stemming {
            Stemming::Light => stem(word),
            Stemming::Snowball => snowball(word),
        }
    }
}

/// Call `f` with each piece of `text`: runs of ASCII letters and digits or of other-script
/// characters, cut before an upper-case letter that follows a lower-case one (`getWeather`),
/// and before the last capital of a capitals run followed by lower case (`HTTPServer`).
///
/// One pass over the bytes, each classed by a table; every cut is before an ASCII byte, so
/// at a character boundary.
fn each_piece<'t>(text: &'t str, mut f: impl FnMut(&'t str)) {
    let b = text.as_bytes();
    let class = |i: usize| CLASSES[usize::from(b[i])];
    let mut i = 0;
    while i < b.len() {
        if class(i) == SEPARATOR {
            i += 1;
            continue;
        }
        let mut start = i;
        let mut previous = class(i);
        i += 1;
        while i < b.len() {
            let c = class(i);
            if c == SEPARATOR {
                break;
            }
            if c == UPPER
                && (previous == LOWER
                    || (previous == UPPER && i + 1 < b.len() && class(i + 1) == LOWER))
            {
                f(&text[start..i]);
                start = i;
            }
            previous = c;
            i += 1;
        }
        f(&text[start..i]);
    }
}

const SEPARATOR: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
/// A digit, or a byte of a character outside ASCII: part of a word, neither case.
const OTHER: u8 = 3;

/// Each byte's class.
static CLASSES: [u8; 256] = {
    let mut classes = [SEPARATOR; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        classes[b] = if byte.is_ascii_lowercase() {
            LOWER
        } else if byte.is_ascii_uppercase() {
            UPPER
        } else if byte.is_ascii_digit() || byte >= 0x80 {
            OTHER
        } else {
            SEPARATOR
        };
        b += 1;
    }
    classes
};

/// The Snowball English stemmer, for words of ASCII letters (others are kept as they are).
/// Stems are remembered per thread (a catalog repeats its words: indexing 10,000 tools stems
/// each distinct word once); the memory is dropped when it passes 65,536 words.
fn snowball(t: &mut String) {
    static ENGLISH: std::sync::OnceLock<rust_stemmers::Stemmer> = std::sync::OnceLock::new();
    thread_local! {
        static STEMS: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, Box<str>>> =
            std::cell::RefCell::default();
    }
    if t.len() < 3 || !t.bytes().all(|b| b.is_ascii_lowercase()) {
        return;
    }
    STEMS.with_borrow_mut(|stems| {
        if let Some(stem) = stems.get(t.as_str()) {
            t.clear();
            t.push_str(stem);
            return;
        }
        let stemmer = ENGLISH
            .get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English));
        let stem: Box<str> = stemmer.stem(t).into();
        if stems.len() >= 1 << 16 {
            stems.clear();
        }
        stems.insert(t.as_str().into(), stem.clone());
        t.clear();
        t.push_str(&stem);
    });
}

/// Words too common in tool descriptions and questions to tell tools apart (sorted).
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "d", "do",
    "does", "for", "from", "get", "give", "had", "has", "have", "he", "her", "his", "how", "i",
    "if", "in", "into", "is", "it", "its", "let", "like", "ll", "m", "me", "my", "need", "of",
    "on", "or", "our", "please", "re", "s", "she", "should", "show", "so", "some", "t", "tell",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "to", "us", "ve", "was", "we", "what", "when", "where", "which", "who", "will", "with",
    "would", "you", "your",
];

fn is_stopword(word: &str) -> bool {
    // No stopword is longer than 6 bytes: a word of up to 6 bytes is one number (its bytes and
    // its length), looked up among the stopwords' numbers without comparing strings.
    static CODES: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    let Some(packed) = code(word) else {
        return false;
    };
    let codes = CODES.get_or_init(|| {
        let mut codes: Vec<u64> = STOPWORDS.iter().filter_map(|w| code(w)).collect();
        codes.sort_unstable();
        codes
    });
    codes.binary_search(&packed).is_ok()
}

/// A word of up to 6 bytes as one number; `None` for longer words.
fn code(word: &str) -> Option<u64> {
    let bytes = word.as_bytes();
    if bytes.len() > 6 {
        return None;
    }
    let mut packed = [0u8; 8];
    packed[..bytes.len()].copy_from_slice(bytes);
    packed[7] = bytes.len() as u8;
    Some(u64::from_le_bytes(packed))
}

/// A light English suffix stemmer for words of `a`–`z` only: plurals, then `-ing` / `-ed`
/// (undoubling `stopp` → `stop`), then a final `e`.
fn stem(t: &mut String) {
    if t.len() < 4 || !t.bytes().all(|b| b.is_ascii_lowercase()) {
        return;
    }
    if t.ends_with("ies") && t.len() >= 5 {
        t.truncate(t.len() - 3);
        t.push('y');
    } else if t.ends_with("sses") {
        t.truncate(t.len() - 2);
    } else if t.ends_with('s') && !(t.ends_with("ss") || t.ends_with("us") || t.ends_with("is")) {
        t.truncate(t.len() - 1);
    }
    if t.len() >= 5 {
        let has_vowel = |s: &str| s.bytes().any(|b| b"aeiou".contains(&b));
        for suffix in ["ing", "ed"] {
            if let Some(rest) = t.strip_suffix(suffix)
                && rest.len() >= 3
                && has_vowel(rest)
            {
                let keep = undouble(rest);
                t.truncate(keep);
                break;
            } else if t.ends_with(suffix) {
                break;
            }
        }
    }
    if t.len() >= 4 && t.ends_with('e') {
        t.truncate(t.len() - 1);
    }
}

/// The length of `t` without a final doubled consonant (other than `l`, `s`, `z`).
fn undouble(t: &str) -> usize {
    let b = t.as_bytes();
    let n = b.len();
    if n >= 2 && b[n - 1] == b[n - 2] && !b"lsz".contains(&b[n - 1]) {
        n - 1
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Analyzer::new(Stemming::Light).each_term(text, |t| out.push(t.to_string()));
        out
    }

    fn stemmed(word: &str) -> String {
        let mut word = word.to_string();
        stem(&mut word);
        word
    }

    #[test]
    fn the_method_notes_examples() {
        assert_eq!(
            all("getHTTPServer v2 ipv4 información_x.y-Z  ABCdef the Cities running"),
            [
                "http",
                "server",
                "v2",
                "ipv4",
                "información",
                "x",
                "y",
                "z",
                "ab",
                "cdef",
                "city",
                "run"
            ]
        );
        for (word, stemmed_form) in [
            ("cities", "city"),
            ("addresses", "address"),
            ("running", "run"),
            ("stopped", "stop"),
            ("computing", "comput"),
            ("computes", "comput"),
            ("compute", "comput"),
            ("created", "creat"),
            ("speed", "spe"),
            ("status", "status"),
            ("analysis", "analysis"),
            ("class", "class"),
            ("1800s", "1800s"),
            ("calling", "call"),
            ("buzzing", "buzz"),
        ] {
            assert_eq!(stemmed(word), stemmed_form, "{word}");
        }
    }

    #[test]
    fn names_split_on_every_convention() {
        assert_eq!(
            all("get_weather-forecast.v2"),
            ["weather", "forecast", "v2"]
        );
        assert_eq!(all("getWeatherForecast"), ["weather", "forecast"]);
        assert_eq!(all("sendEmail"), ["send", "email"]);
    }

    #[test]
    fn the_stopword_list_is_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(STOPWORDS.len(), 80);
        assert!(
            STOPWORDS.iter().all(|w| w.len() <= 6),
            "is_stopword's length check"
        );
    }
}
