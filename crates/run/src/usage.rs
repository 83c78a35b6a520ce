//! Bad input, told apart from a failed run: the binary maps it to exit 2
//! (nothing ran, nothing was stored as a result).

/// Bad input from the user, as one line naming the flag, file or host.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// An unknown run id is bad input (exit 2); any other store error is not.
#[must_use]
pub fn unknown_run(e: kvbench_store::StoreError, db: &kvbench_store::Location) -> anyhow::Error {
    match e {
        kvbench_store::StoreError::NotFound(id) => {
            UsageError(format!("no run with id {id} in {db}")).into()
        }
        other => other.into(),
    }
}
