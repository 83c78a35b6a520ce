//! The largest numbers a workload may ask for. YCSB takes any Java `long`;
//! past these a number is a typo or a unit slip (a load that would never
//! end, a value every server refuses, a count the results database cannot
//! hold), so it is refused before anything starts. kvbench's flags for the
//! same numbers (`--records`, `--field-length`, ...) share these limits;
//! docs/reliability.md lists them all.

/// `recordcount` and `--records`: a trillion records, beyond what any one
/// deployment holds and well inside the signed 64-bit integers the results
/// database stores.
pub const MAX_RECORDS: u64 = 1_000_000_000_000;

/// `operationcount` and `--operations`: at ten million operations per
/// second, more than a day.
pub const MAX_OPERATIONS: u64 = 1_000_000_000_000;

/// `fieldcount` and `--field-count`.
pub const MAX_FIELD_COUNT: u32 = 1024;

/// `fieldlength` and `--field-length`: 16 MiB per field.
pub const MAX_FIELD_LENGTH: u32 = 16 << 20;

/// A whole record (`fieldcount` x `fieldlength`): Redis refuses a bulk
/// string above 512 MB (`proto-max-bulk-len`), and a request must fit in
/// memory several times over (client, socket buffers, server).
pub const MAX_RECORD_BYTES: u64 = 512 << 20;

/// `maxscanlength`: records one SCAN may return.
pub const MAX_SCAN_LENGTH: u32 = 1_000_000;

/// `threadcount` and `--clients`: connections. Each is a socket on both
/// ends and a few kilobytes of buffers; past this a loopback address runs
/// out of ephemeral ports (28,232 by default) long before.
pub const MAX_CLIENTS: u32 = 50_000;

/// `target` and `--rate`: operations per second offered in open loop, a
/// hundred times what one client machine sends today.
pub const MAX_RATE: u64 = 100_000_000;

/// Checks `value` against `min..=max` for `what` (a property or a flag);
/// the message says the range and the value.
///
/// # Errors
/// The message, without the name (the caller's error type adds it).
pub fn check(value: u64, min: u64, max: u64) -> Result<(), String> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(format!("must be between {min} and {max}, got {value}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ends_of_a_range_are_in_it_and_one_past_is_not() {
        assert!(check(1, 1, 10).is_ok());
        assert!(check(10, 1, 10).is_ok());
        assert_eq!(
            check(0, 1, 10).unwrap_err(),
            "must be between 1 and 10, got 0"
        );
        assert_eq!(
            check(u64::MAX, 1, MAX_RECORDS).unwrap_err(),
            "must be between 1 and 1000000000000, got 18446744073709551615"
        );
    }
}
