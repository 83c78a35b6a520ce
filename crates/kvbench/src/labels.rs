//! Labels as the user types them: `KEY` or `KEY=VALUE`, checked once here
//! for every flag that takes them (`--label`, `--add`, `--remove`), so that
//! a bad one is one line naming the flag (exit 2) and the store only ever
//! holds keys that are easy to type, filter on and put in a file name.

use crate::exit::UsageError;
use kvbench_store::Labels;

/// The longest key and value kvbench accepts.
const MAX_KEY: usize = 64;
const MAX_VALUE: usize = 256;

/// What a key may hold, for messages.
const KEY_RULE: &str =
    "a key is 1 to 64 letters, digits and _ . : / -, starting with a letter or digit";

/// Checks a key as `flag` gave it.
pub fn check_key(flag: &str, key: &str) -> Result<(), UsageError> {
    let bad = |why: &str| Err(UsageError(format!("{flag} '{key}': {why}")));
    if key.is_empty() {
        return bad("no key (KEY or KEY=VALUE)");
    }
    if key.contains('=') {
        return bad(&format!("{flag} takes a key, not KEY=VALUE"));
    }
    let first_ok = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    let chars_ok = key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.:/-".contains(c));
    if !first_ok || !chars_ok || key.len() > MAX_KEY {
        return bad(KEY_RULE);
    }
    Ok(())
}

/// `KEY` (empty value) or `KEY=VALUE` (split at the first `=`).
pub fn parse(flag: &str, text: &str) -> Result<(String, String), UsageError> {
    let (key, value) = text.split_once('=').unwrap_or((text, ""));
    if key.is_empty() {
        return Err(UsageError(format!(
            "{flag} '{text}': no key before '=' (KEY or KEY=VALUE)"
        )));
    }
    check_key(flag, key)?;
    if value.chars().count() > MAX_VALUE || value.chars().any(char::is_control) {
        return Err(UsageError(format!(
            "{flag} '{key}': a value is at most {MAX_VALUE} characters, none of them control characters"
        )));
    }
    Ok((key.to_string(), value.to_string()))
}

/// Every `KEY[=VALUE]` of a repeated flag; a key given twice is refused
/// rather than one of its values silently winning.
pub fn parse_all(flag: &str, texts: &[String]) -> Result<Labels, UsageError> {
    let mut labels = Labels::new();
    for text in texts {
        let (key, value) = parse(flag, text)?;
        if labels.insert(key.clone(), value).is_some() {
            return Err(UsageError(format!("{flag}: key '{key}' given twice")));
        }
    }
    Ok(labels)
}

/// A filter: `KEY` matches any value, `KEY=VALUE` only that value.
pub fn parse_filter(flag: &str, text: &str) -> Result<(String, Option<String>), UsageError> {
    let (key, value) = parse(flag, text)?;
    Ok((key, text.contains('=').then_some(value)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_values_and_errors() {
        assert_eq!(parse("--label", "env").unwrap(), ("env".into(), "".into()));
        assert_eq!(
            parse("--label", "note=a=b c").unwrap(),
            ("note".into(), "a=b c".into())
        );
        assert_eq!(
            parse_filter("--label", "env").unwrap(),
            ("env".into(), None)
        );
        assert_eq!(
            parse_filter("--label", "env=").unwrap(),
            ("env".into(), Some(String::new()))
        );
        for bad in ["", "=x", "-x", "a b", "é", &"k".repeat(65)] {
            let e = parse("--add", bad).unwrap_err().0;
            assert!(e.starts_with("--add '"), "{e}");
        }
        assert!(parse("--label", "k=a\nb").is_err());
        let e = check_key("--remove", "a=b").unwrap_err().0;
        assert_eq!(e, "--remove 'a=b': --remove takes a key, not KEY=VALUE");
        let e = parse_all("--label", &["a=1".into(), "a=2".into()])
            .unwrap_err()
            .0;
        assert_eq!(e, "--label: key 'a' given twice");
        let l = parse_all("--label", &["b=2".into(), "a".into()]).unwrap();
        assert_eq!(
            l,
            [("a".into(), "".into()), ("b".into(), "2".into())].into()
        );
    }
}
