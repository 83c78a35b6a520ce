//! A password that cannot be printed by accident.
//!
//! `Debug` shows a placeholder and there is no `Display`, so a secret that
//! ends up in an error, a log line, a stored config or a JSON document by a
//! careless `{:?}` says `<redacted>` instead of the password. The only way to
//! the text is [`Secret::expose`], called where AUTH is encoded.

use std::fmt;

/// A password.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a password.
    pub fn new(text: impl Into<String>) -> Secret {
        Secret(text.into())
    }

    /// The password itself, for the AUTH command only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn debug_never_shows_the_password() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?}"), "<redacted>");
        assert_eq!(format!("{:?}", Some(s.clone())), "Some(<redacted>)");
        assert_eq!(s.expose(), "hunter2");
    }
}
