//! Bad input, told apart from a failed run: the binary maps it to exit 2
//! (nothing ran, nothing was stored as a result).

/// Bad input from the user, as one line naming the flag, file or host.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);
