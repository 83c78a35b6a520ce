//! Process limits a large run needs: one file descriptor per connection.

/// Raises the soft open-file limit to fit `needed` descriptors (plus slack
/// for probes, the store and the runtime), up to the hard limit.
///
/// # Errors
/// A one-line message naming the limit when even the hard limit is too low.
pub fn ensure_open_files(needed: u64) -> Result<(), String> {
    let want = needed + 64;
    // SAFETY: getrlimit/setrlimit read and write the struct we pass.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err("cannot read the open-file limit (RLIMIT_NOFILE)".into());
    }
    if lim.rlim_cur >= want {
        return Ok(());
    }
    if lim.rlim_max < want {
        return Err(format!(
            "{needed} connections need {want} open files but the hard limit is {}; raise it (ulimit -Hn, /etc/security/limits.conf) or use fewer --clients",
            lim.rlim_max
        ));
    }
    lim.rlim_cur = want;
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(format!(
            "cannot raise the open-file limit to {want}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}
