//! From text to index terms: split into words (on punctuation, `_`, `-`, `.`, camelCase and
//! letter–digit boundaries), lowercased, common English words dropped, and a light suffix
//! stemmer so that "forecasts" finds "forecast".

/// The terms of `text`, in order (repeats kept: they are term frequencies).
pub(super) fn terms(text: &str, out: &mut Vec<String>) {
    for word in words(text) {
        if is_stopword(&word) {
            continue;
        }
        out.push(stem(word));
    }
}

/// Words of `text`, lowercased: runs of letters or of digits, with a new word at each
/// lower-to-upper change (`getWeather`), before the last capital of an upper-case run
/// followed by lower case (`HTTPServer` → `http`, `server`) and at letter–digit boundaries.
pub(super) fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut word, &mut out);
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|p| chars.get(p)) {
            let next = chars.get(i + 1).copied();
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase()
                    && c.is_uppercase()
                    && next.is_some_and(char::is_lowercase))
                || (prev.is_alphabetic() && c.is_numeric())
                || (prev.is_numeric() && c.is_alphabetic());
            if boundary && prev.is_alphanumeric() {
                flush(&mut word, &mut out);
            }
        }
        word.extend(c.to_lowercase());
    }
    flush(&mut word, &mut out);
    out
}

fn flush(word: &mut String, out: &mut Vec<String>) {
    if !word.is_empty() {
        out.push(std::mem::take(word));
    }
}

/// Words too common in tool descriptions and questions to tell tools apart.
const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "any", "are", "as", "at", "be", "by", "can", "could", "do", "does",
    "for", "from", "get", "give", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its",
    "me", "my", "of", "on", "or", "please", "should", "so", "that", "the", "their", "them", "then",
    "there", "these", "this", "to", "use", "used", "using", "was", "we", "what", "when", "which",
    "will", "with", "would", "you", "your",
];

fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// A light English suffix stemmer: plural and verb endings only, never below three letters.
pub(super) fn stem(mut word: String) -> String {
    let len = word.chars().count();
    if len <= 3 || !word.is_ascii() {
        return word;
    }
    for (suffix, replacement) in [
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ] {
        if let Some(stripped) = word.strip_suffix(suffix)
            && stripped.len() + replacement.len() >= 3
            && !(suffix == "s" && (stripped.ends_with('s') || stripped.ends_with('u')))
        {
            let keep = stripped.len();
            word.truncate(keep);
            word.push_str(replacement);
            break;
        }
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        terms(text, &mut out);
        out
    }

    #[test]
    fn names_split_on_every_convention() {
        assert_eq!(
            words("get_weather-forecast.v2"),
            ["get", "weather", "forecast", "v", "2"]
        );
        assert_eq!(words("getWeatherForecast"), ["get", "weather", "forecast"]);
        assert_eq!(words("HTTPServerConfig"), ["http", "server", "config"]);
        assert_eq!(words("sha256Sum"), ["sha", "256", "sum"]);
        assert_eq!(words("  Ünïcode wörds  "), ["ünïcode", "wörds"]);
    }

    #[test]
    fn stopwords_go_and_endings_are_stripped() {
        assert_eq!(
            all("What is the weather in the cities?"),
            ["weather", "city"]
        );
        assert_eq!(all("listing forecasts"), ["list", "forecast"]);
        // Short words and words ending in -ss / -us keep their form.
        assert_eq!(all("bus class gas"), ["bus", "class", "gas"]);
    }

    #[test]
    fn the_stopword_list_is_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }
}
