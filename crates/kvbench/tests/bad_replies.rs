//! A server that answers garbage (issue 15, item 4). A proxy the test runs
//! sits between kvbench and a real Redis: every command kvbench sends to
//! set up and probe goes to Redis, and every workload command gets a bad
//! reply instead: malformed, truncated, oversized, larger than any record
//! and still arriving, or a line that never ends. kvbench must end the run
//! within its timeout, never panic, keep its memory bounded, and say what
//! the server did.

use crate::util::Sandbox;
use kvbench_proto::resp;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// What the proxy answers to a workload command.
#[derive(Clone, Copy, Debug)]
enum Bad {
    /// Not RESP at all.
    Malformed,
    /// The start of a reply, then silence.
    Truncated,
    /// A bulk length above what RESP allows (512 MiB).
    Oversized,
    /// A bulk of 500 MB (allowed by RESP, far above any record), sent as
    /// fast as the client reads it.
    Huge,
    /// A status line that never ends.
    Endless,
}

/// The workload's commands; anything else goes to Redis.
const WORKLOAD: &[&[u8]] = &[b"HGETALL", b"HMGET", b"HSET", b"HMSET", b"GET", b"SET"];

fn serve(mut client: TcpStream, backend: SocketAddr, bad: Bad) {
    let Ok(mut redis) = TcpStream::connect(backend) else {
        return;
    };
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        let n = match client.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        while let Ok(Some((cmd, used))) = resp::parse_value(&buf) {
            let raw: Vec<u8> = buf.drain(..used).collect();
            let name = match &cmd {
                resp::Value::Array(a) => a
                    .first()
                    .and_then(|v| v.as_bytes())
                    .map(<[u8]>::to_ascii_uppercase),
                _ => None,
            };
            if name.is_some_and(|n| WORKLOAD.contains(&n.as_slice())) {
                misbehave(&mut client, bad);
                if matches!(bad, Bad::Truncated) {
                    // Silence: read and drop whatever else comes.
                    while matches!(client.read(&mut chunk), Ok(n) if n > 0) {}
                    return;
                }
                continue;
            }
            if redis.write_all(&raw).is_err() {
                return;
            }
            let mut reply = Vec::new();
            loop {
                if let Ok(Some(r)) = resp::parse_reply(&reply) {
                    if client.write_all(&reply[..r.consumed]).is_err() {
                        return;
                    }
                    break;
                }
                match redis.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => reply.extend_from_slice(&chunk[..n]),
                }
            }
        }
    }
}

fn misbehave(client: &mut TcpStream, bad: Bad) {
    let _ = match bad {
        Bad::Malformed => client.write_all(b"?this is not RESP\r\n"),
        Bad::Truncated => client.write_all(b"$10\r\nabc"),
        Bad::Oversized => client.write_all(b"$536870913\r\n"),
        Bad::Huge | Bad::Endless => {
            let head: &[u8] = if matches!(bad, Bad::Huge) {
                b"$500000000\r\n"
            } else {
                b"+"
            };
            let filler = vec![b'a'; 1 << 16];
            let mut r = client.write_all(head);
            // Until kvbench closes the connection (or 600 MB went out).
            for _ in 0..(600 << 20) / filler.len() {
                r = client.write_all(&filler);
                if r.is_err() {
                    break;
                }
            }
            r
        }
    };
}

fn proxy(backend: SocketAddr, bad: Bad) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for c in listener.incoming().flatten() {
            std::thread::spawn(move || serve(c, backend, bad));
        }
    });
    addr
}

#[test]
fn bad_replies_end_the_run_within_its_timeout_with_bounded_memory() {
    let _serial = crate::util::timing_sensitive();
    let server = crate::util::private_redis();
    let sb = Sandbox::new();
    for bad in [
        Bad::Malformed,
        Bad::Truncated,
        Bad::Oversized,
        Bad::Huge,
        Bad::Endless,
    ] {
        let target = proxy(server.addr(), bad).to_string();
        let started = Instant::now();
        let child = sb.spawn(&[
            "run",
            "--system",
            "redis",
            "--workload",
            "read-heavy",
            "--target",
            &target,
            "--no-load",
            "--records",
            "100",
            "--field-count",
            "2",
            "--field-length",
            "10",
            "--clients",
            "4",
            "--duration",
            "20s",
            "--warmup",
            "0s",
            "--timeout",
            "2s",
            "--json",
            "--quiet",
        ]);
        let peak = crate::util::peak_rss_kib(child.id());
        let out = child.wait_with_output().expect("kvbench ends");
        let took = started.elapsed();
        let peak_mib = peak.join().expect("VmHWM") / 1024;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{bad:?}: {stderr}");
        assert!(
            took < Duration::from_secs(8),
            "{bad:?} took {took:?}: {stderr}"
        );
        assert_eq!(out.status.code(), Some(1), "{bad:?}: {stderr}");
        let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert!(
            rec["marks"].to_string().contains("partial"),
            "{bad:?}: {}",
            rec["marks"]
        );
        let kinds = rec["run"]["errors_by_kind"].to_string();
        let want = if matches!(bad, Bad::Truncated) {
            "timeout"
        } else {
            "protocol"
        };
        assert!(kinds.contains(want), "{bad:?}: {kinds}");
        assert!(peak_mib < 160, "{bad:?}: kvbench peaked at {peak_mib} MiB");
        println!("{bad:?}: ended in {took:?}, peak {peak_mib} MiB, errors {kinds}");
    }
    server.stop().expect("stops");
}
