//! Small helpers shared across the crate, each written once.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde_json::Value;

/// Lock `mutex`, recovering the data when another thread panicked while holding it: every
/// structure guarded this way stays consistent at each step, so the data is still good, and a
/// panic elsewhere must not turn into a second one here.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// [`lock`] for reading an `RwLock`.
pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// [`lock`] for writing an `RwLock`.
pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Builder methods that each set one field and hand the builder back, written once. Each
/// item is a method's docs and head, then the field and the value it gets:
/// `pub fn memory_limit(bytes: usize) => limits.memory = bytes;` is
/// `pub fn memory_limit(mut self, bytes: usize) -> Self { self.limits.memory = bytes; self }`,
/// and `pub fn sequential() => sequential = true;` a flag without an argument.
macro_rules! setters {
    ($(
        $(#[$attr:meta])*
        $vis:vis fn $name:ident($($arg:ident: $ty:ty)?) => $($field:ident).+ = $value:expr;
    )*) => {
        $(
            $(#[$attr])*
            $vis fn $name(mut self $(, $arg: $ty)?) -> Self {
                self.$($field).+ = $value;
                self
            }
        )*
    };
}
pub(crate) use setters;

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub(crate) fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// An error with its causes, `a: b: c`, so "connection refused" is not hidden behind "error
/// sending request".
#[cfg(any(http, durable))]
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    if let Some(hint) = tls_hint(&text) {
        text.push_str(" (");
        text.push_str(hint);
        text.push(')');
    }
    text
}

/// What a TLS failure named in `message` means and how to fix it, for the failures people
/// make by hand: a server certificate made the quick way, a CA certificate used as the
/// server's own (`openssl req -x509` without extensions), which rustls refuses even when it is
/// trusted.
#[cfg(any(http, durable))]
pub(crate) fn tls_hint(message: &str) -> Option<&'static str> {
    message.contains("CaUsedAsEndEntity").then_some(
        "CaUsedAsEndEntity: the server's certificate is a CA certificate (basicConstraints \
         CA:TRUE), and TLS clients refuse a CA certificate as a server's own; give the server a \
         certificate for its name signed by a CA (or, made with openssl, add `-addext \
         basicConstraints=critical,CA:FALSE -addext subjectAltName=DNS:localhost`), and trust \
         the CA",
    )
}

/// A JSON value's type as an error message names it: `null`, `a boolean`, `a number`,
/// `a string`, `an array` or `an object`.
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Runs `action` when dropped, unless [defused](Self::defuse) first: the clean-up of work a
/// future started and may not finish, because a timeout, a cancellation or a dropped batch can
/// drop the future at any `.await`.
#[cfg(any(feature = "a2a", feature = "mcp"))]
#[must_use = "the action runs when the guard is dropped"]
pub(crate) struct OnDrop<F: FnOnce()> {
    action: Option<F>,
}

#[cfg(any(feature = "a2a", feature = "mcp"))]
impl<F: FnOnce()> OnDrop<F> {
    /// A guard that runs `action` when dropped.
    pub(crate) fn new(action: F) -> Self {
        OnDrop {
            action: Some(action),
        }
    }

    /// The work finished: drop the guard without running the action.
    pub(crate) fn defuse(mut self) {
        self.action = None;
    }
}

#[cfg(any(feature = "a2a", feature = "mcp"))]
impl<F: FnOnce()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        if let Some(action) = self.action.take() {
            action();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::prefix;

    #[cfg(any(feature = "a2a", feature = "mcp"))]
    #[test]
    fn drop_guards_run_unless_defused() {
        use std::cell::Cell;

        use super::OnDrop;

        let ran = Cell::new(0);
        drop(OnDrop::new(|| ran.set(ran.get() + 1)));
        assert_eq!(ran.get(), 1);
        OnDrop::new(|| ran.set(ran.get() + 1)).defuse();
        assert_eq!(ran.get(), 1);
    }

    #[test]
    fn prefixes_end_on_character_boundaries() {
        assert_eq!(prefix("héllo", 10), "héllo");
        assert_eq!(prefix("héllo", 2), "h");
        assert_eq!(prefix("héllo", 3), "hé");
        assert_eq!(prefix("", 0), "");
    }
}
