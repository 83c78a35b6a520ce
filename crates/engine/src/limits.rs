//! Process limits a large run needs: one file descriptor per connection.

/// Descriptors kept free for probes, the store and the runtime.
const SLACK: u64 = 64;

fn read_limit() -> Result<libc::rlimit, String> {
    // SAFETY: getrlimit writes the struct we pass.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err("cannot read the open-file limit (RLIMIT_NOFILE)".into());
    }
    Ok(lim)
}

/// Whether `needed` connections fit under the hard open-file limit (the
/// soft one is raised when the run starts), so a run that cannot open its
/// connections is refused before any server starts.
///
/// # Errors
/// A one-line message naming the limit and how to raise it.
pub fn check_open_files(needed: u64) -> Result<(), String> {
    let lim = read_limit()?;
    let want = needed + SLACK;
    if lim.rlim_max < want {
        return Err(format!(
            "{needed} connections need {want} open files but the hard limit is {}; raise it (ulimit -Hn, /etc/security/limits.conf) or use fewer --clients",
            lim.rlim_max
        ));
    }
    Ok(())
}

/// Raises the soft open-file limit to fit `needed` descriptors (plus slack
/// for probes, the store and the runtime), up to the hard limit.
///
/// # Errors
/// A one-line message naming the limit when even the hard limit is too low.
pub fn ensure_open_files(needed: u64) -> Result<(), String> {
    check_open_files(needed)?;
    let mut lim = read_limit()?;
    let want = needed + SLACK;
    if lim.rlim_cur >= want {
        return Ok(());
    }
    lim.rlim_cur = want;
    // SAFETY: setrlimit reads the struct we pass.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(format!(
            "cannot raise the open-file limit to {want}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}
