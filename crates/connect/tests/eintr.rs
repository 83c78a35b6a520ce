//! A probe's read interrupted by a signal is read again (issue 15: 7 of
//! about 110 probes of a `--target` Memcached failed with "receive:
//! Interrupted system call"). Here a handler is installed without
//! SA_RESTART, so a blocking read really returns EINTR, and the waiting
//! thread is signalled again and again while the server takes its time.

use kvbench_connect::{exchange, Access};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

extern "C" fn nothing(_: libc::c_int) {}

#[test]
fn a_read_interrupted_by_signals_is_read_again() {
    // SAFETY: a plain C handler that does nothing, installed for SIGUSR2,
    // which nothing else in this test binary uses; flags 0 (no SA_RESTART).
    let installed = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = nothing as extern "C" fn(libc::c_int) as usize;
        sa.sa_flags = 0;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut())
    };
    assert_eq!(installed, 0);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        let mut buf = [0u8; 64];
        let _ = s.read(&mut buf);
        std::thread::sleep(Duration::from_millis(600));
        let _ = s.write_all(b"+PONG\r\n");
    });
    let done = Arc::new(AtomicBool::new(false));
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() } as usize;
    let flag = done.clone();
    let pester = std::thread::spawn(move || {
        let mut sent = 0;
        while !flag.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
            // SAFETY: the reading thread is alive until `done` is set.
            if !flag.load(Ordering::Relaxed) {
                unsafe { libc::pthread_kill(me as libc::pthread_t, libc::SIGUSR2) };
                sent += 1;
            }
        }
        sent
    });
    let reply = exchange(
        addr,
        &Access::plain(),
        Duration::from_secs(5),
        b"*1\r\n$4\r\nPING\r\n",
        1024,
        kvbench_proto::resp::parse_value,
    );
    done.store(true, Ordering::Relaxed);
    let sent = pester.join().expect("pester");
    assert!(sent >= 5, "{sent} signals sent during the wait");
    assert_eq!(
        reply,
        Ok(kvbench_proto::resp::Value::Status("PONG".into())),
        "after {sent} signals"
    );
}
