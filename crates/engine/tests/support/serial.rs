//! One lock for the tests of a test binary that must not run alongside
//! each other.

/// Tests whose assertions are about timing, or that load the machine
/// heavily, take this lock so they never run alongside each other on a
/// 2-core machine.
pub fn timing_sensitive() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
