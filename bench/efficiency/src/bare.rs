//! The bare client: the floor under any client's CPU per operation.
//!
//! It does the I/O kvbench's io_uring loop does and nothing else: the
//! engine's own ring and receive buffers (`kvbench_engine::uring::setup`:
//! single issuer, deferred task work), registered sockets, one multishot
//! receive per connection into those provided buffers, one
//! send in flight per connection, one `io_uring_enter` per batch that waits
//! for one reply beyond the sends it submits. What it leaves out is
//! everything a benchmark is for: no workload generator (requests come from
//! a pre-encoded table of up to [`TABLE`] requests, cycled), no clock read, no
//! histogram, no per-second series, no key or value encoding per request.
//! It counts replies with a minimal parser and fails on any error reply.
//!
//! Its CPU per operation is what the kernel charges a client for this
//! traffic; kvbench's CPU minus the bare client's is kvbench's own cost.
//! Run by `kvbench-efficiency bare ...` in a process of its own, so the
//! bench measures it with `wait4` exactly as it measures the real tools.

use anyhow::{anyhow, bail, Context, Result};
use io_uring::{cqueue, opcode, types, IoUring};
use kvbench_engine::bufring::GROUP;
use kvbench_proto::memcache_text::{self as mc, McReplyKind};
use kvbench_proto::resp::{self, ReplyKind};
use kvbench_workload::keys::KeyNamer;
use std::net::{SocketAddr, TcpStream};

/// Pre-encoded requests, cycled: enough distinct keys that the server's
/// work resembles a uniform workload, few enough to stay in cache.
pub const TABLE: usize = 8192;
/// The table holds fewer requests when values are large, to stay under this.
const TABLE_BYTES: usize = 64 << 20;
/// A run fails after this many waits in a row that timed out (each waits
/// at most a second) without a completion: a stall of about 10 s, noticed
/// without reading a clock per reply.
const STALL_WAITS: u32 = 10;

/// Which protocol the table is encoded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// RESP: `GET key` / `SET key value`.
    Redis,
    /// Memcached text: `get key` / `set key 0 0 n`.
    Memcached,
}

/// What one run does.
#[derive(Debug, Clone)]
pub struct Args {
    pub proto: Proto,
    pub addr: SocketAddr,
    pub ops: u64,
    pub conns: usize,
    pub pipeline: usize,
    pub records: u64,
    pub value_bytes: usize,
}

/// Parses `bare --proto P --target ADDR --ops N --conns C --pipeline P
/// --records R --value-bytes B`.
pub fn parse(args: &[String]) -> Result<Args> {
    const FLAGS: [&str; 7] = [
        "--proto",
        "--target",
        "--ops",
        "--conns",
        "--pipeline",
        "--records",
        "--value-bytes",
    ];
    for flag in args.iter().step_by(2) {
        if !FLAGS.contains(&flag.as_str()) {
            bail!("unknown argument `{flag}` (expected {})", FLAGS.join(", "));
        }
    }
    let get = |name: &str| -> Result<String> {
        let i = args
            .iter()
            .position(|a| a == name)
            .ok_or_else(|| anyhow!("missing {name}"))?;
        args.get(i + 1)
            .cloned()
            .ok_or_else(|| anyhow!("{name} needs a value"))
    };
    let num = |name: &str, v: String| -> Result<u64> {
        v.parse()
            .map_err(|_| anyhow!("{name}: `{v}` is not a number"))
    };
    let proto = match get("--proto")?.as_str() {
        "redis" => Proto::Redis,
        "memcached" => Proto::Memcached,
        other => bail!("--proto: expected redis or memcached, got `{other}`"),
    };
    let target = get("--target")?;
    let addr = target
        .parse()
        .map_err(|_| anyhow!("--target: `{target}` is not HOST:PORT"))?;
    let a = Args {
        proto,
        addr,
        ops: num("--ops", get("--ops")?)?,
        conns: num("--conns", get("--conns")?)? as usize,
        pipeline: num("--pipeline", get("--pipeline")?)? as usize,
        records: num("--records", get("--records")?)?,
        value_bytes: num("--value-bytes", get("--value-bytes")?)? as usize,
    };
    if a.conns == 0 || a.pipeline == 0 || a.records == 0 || a.ops == 0 {
        bail!("--ops, --conns, --pipeline and --records must be at least 1");
    }
    if a.conns > 4096 {
        bail!("at most 4096 connections");
    }
    Ok(a)
}

/// Half GETs, half SETs on keys drawn uniformly (seeded, so every run
/// sends the same table), named as kvbench names its records so GETs hit
/// what kvbench loaded.
fn table(a: &Args) -> Vec<Vec<u8>> {
    let namer = KeyNamer::default();
    let value = vec![b'x'; a.value_bytes];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut key = Vec::new();
    let len = (TABLE_BYTES / (a.value_bytes + 64)).clamp(2, TABLE) / 2 * 2;
    (0..len)
        .map(|i| {
            // SplitMix64: a fixed, well-mixed sequence; quality is irrelevant here.
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            key.clear();
            namer.write_key(z % a.records, &mut key);
            let get = i % 2 == 0;
            let mut r = Vec::with_capacity(64 + value.len());
            match (a.proto, get) {
                (Proto::Redis, true) => resp::encode_command(&mut r, &[b"GET", &key]),
                (Proto::Redis, false) => resp::encode_command(&mut r, &[b"SET", &key, &value]),
                (Proto::Memcached, true) => mc::encode_get(&mut r, &key),
                (Proto::Memcached, false) => mc::encode_set(&mut r, &key, 0, 0, &value),
            }
            r
        })
        .collect()
}

/// Complete replies at the start of `buf`: how many, and the bytes they
/// take. An error reply is an error.
fn replies(proto: Proto, buf: &[u8]) -> Result<(u64, usize)> {
    let mut pos = 0;
    let mut n = 0;
    while let Some(len) = reply_len(proto, &buf[pos..])? {
        pos += len;
        n += 1;
    }
    Ok((n, pos))
}

/// The length of the complete reply at the start of `b`, or None if it is
/// incomplete, parsed by kvbench's own codecs. Only what a GET or SET of
/// this client can be answered with is accepted.
fn reply_len(proto: Proto, b: &[u8]) -> Result<Option<usize>> {
    let refused = || {
        let line = b.split(|&c| c == b'\r').next().unwrap_or_default();
        anyhow!("server replied `{}`", String::from_utf8_lossy(line))
    };
    let bad = |e| anyhow!("{e} in reply `{}`", String::from_utf8_lossy(b));
    match proto {
        Proto::Redis => match resp::parse_reply(b).map_err(bad)? {
            None => Ok(None),
            Some(r) if r.kind == ReplyKind::Error => Err(refused()),
            Some(r) => Ok(Some(r.consumed)),
        },
        Proto::Memcached => match mc::parse_reply(b).map_err(bad)? {
            None => Ok(None),
            Some(r)
                if matches!(
                    r.kind,
                    McReplyKind::Stored | McReplyKind::Miss | McReplyKind::Values
                ) =>
            {
                Ok(Some(r.consumed))
            }
            Some(_) => Err(refused()),
        },
    }
}

struct Conn {
    sbuf: Vec<u8>,
    sent: usize,
    sending: bool,
    /// Replies answered since the last send was queued: requests owed.
    owed: usize,
    rbuf: Vec<u8>,
    /// A multishot receive is armed (until a completion without `MORE`).
    armed: bool,
}

/// Runs the client; returns the replies counted.
pub fn run(a: &Args) -> Result<u64> {
    let reqs = table(a);
    let socks: Vec<TcpStream> = (0..a.conns)
        .map(|_| {
            let s = TcpStream::connect(a.addr).with_context(|| format!("connect to {}", a.addr))?;
            s.set_nodelay(true).context("TCP_NODELAY")?;
            Ok(s)
        })
        .collect::<Result<_>>()?;
    let (mut ring, mut bufs) = kvbench_engine::uring::setup(a.conns).map_err(|e| anyhow!(e))?;
    let fds: Vec<i32> = socks.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect();
    ring.submitter()
        .register_files(&fds)
        .context("register sockets")?;

    let mut conns: Vec<Conn> = (0..a.conns)
        .map(|_| Conn {
            sbuf: Vec::new(),
            sent: 0,
            sending: false,
            owed: a.pipeline,
            rbuf: Vec::new(),
            armed: false,
        })
        .collect();
    let mut issued = 0u64;
    let mut done = 0u64;
    let mut next_req = 0usize;
    let mut dirty: Vec<usize> = (0..a.conns).collect();
    let mut completions: Vec<(u64, i32, u32)> = Vec::with_capacity(4 * a.conns);
    let mut idle_waits = 0u32;
    let ts = types::Timespec::new().sec(1);
    let args = types::SubmitArgs::new().timespec(&ts);

    while done < a.ops {
        let mut sends = 0;
        for i in dirty.drain(..) {
            let c = &mut conns[i];
            if !c.armed {
                let e = opcode::RecvMulti::new(types::Fixed(i as u32), GROUP)
                    .build()
                    .user_data(((i as u64) << 1) | 1);
                push(&mut ring, &e)?;
                c.armed = true;
            }
            if c.sending || c.owed == 0 || issued == a.ops {
                continue;
            }
            c.sbuf.clear();
            while c.owed > 0 && issued < a.ops {
                c.sbuf.extend_from_slice(&reqs[next_req]);
                next_req = (next_req + 1) % reqs.len();
                c.owed -= 1;
                issued += 1;
            }
            c.sent = 0;
            c.sending = true;
            push(&mut ring, &send(c, i))?;
            sends += 1;
        }
        bufs.publish();
        let timed_out = match ring.submitter().submit_with_args(sends + 1, &args) {
            Ok(_) => false,
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => true,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EBUSY)) => false,
            Err(e) => return Err(e).context("io_uring_enter"),
        };
        completions.extend(
            ring.completion()
                .map(|c| (c.user_data(), c.result(), c.flags())),
        );
        if !completions.is_empty() {
            idle_waits = 0;
        } else if timed_out {
            idle_waits += 1;
            if idle_waits >= STALL_WAITS {
                bail!("no reply for {STALL_WAITS} s after {done} replies");
            }
        }
        for &(data, res, flags) in &completions {
            let i = (data >> 1) as usize;
            let c = &mut conns[i];
            if data & 1 == 0 {
                if res < 0 {
                    bail!("send failed: {}", std::io::Error::from_raw_os_error(-res));
                }
                c.sent += res as usize;
                if c.sent < c.sbuf.len() {
                    push(&mut ring, &send(c, i))?;
                } else {
                    c.sending = false;
                    dirty.push(i);
                }
                continue;
            }
            if !cqueue::more(flags) {
                c.armed = false;
                dirty.push(i);
            }
            if res == -libc::ENOBUFS {
                continue;
            }
            if res <= 0 {
                bail!(
                    "receive failed: {}",
                    if res == 0 {
                        "connection closed by server".to_string()
                    } else {
                        std::io::Error::from_raw_os_error(-res).to_string()
                    }
                );
            }
            let bid =
                cqueue::buffer_select(flags).ok_or_else(|| anyhow!("receive without a buffer"))?;
            let bytes = bufs.buffer(bid, res as usize);
            let n = if c.rbuf.is_empty() {
                let (n, used) = replies(a.proto, bytes)?;
                c.rbuf.extend_from_slice(&bytes[used..]);
                n
            } else {
                c.rbuf.extend_from_slice(bytes);
                let (n, used) = replies(a.proto, &c.rbuf)?;
                c.rbuf.drain(..used);
                n
            };
            bufs.give_back(bid);
            if n > 0 {
                done += n;
                c.owed += n as usize;
                dirty.push(i);
            }
        }
        completions.clear();
    }
    Ok(done)
}

fn send(c: &Conn, i: usize) -> io_uring::squeue::Entry {
    let rest = &c.sbuf[c.sent..];
    opcode::Send::new(types::Fixed(i as u32), rest.as_ptr(), rest.len() as u32)
        .build()
        .user_data((i as u64) << 1)
}

fn push(ring: &mut IoUring, e: &io_uring::squeue::Entry) -> Result<()> {
    loop {
        // SAFETY: sends point into `Conn::sbuf`, which is not touched while
        // its send is in flight and outlives the ring's use of it (the
        // process exits after `run`); receives write only into `BufRing`.
        if unsafe { ring.submission().push(e) }.is_ok() {
            return Ok(());
        }
        ring.submit().context("io_uring submit")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_complete_redis_replies_and_keeps_a_partial_one() {
        let b = b"+OK\r\n$3\r\nabc\r\n$-1\r\n$5\r\nab";
        assert_eq!(replies(Proto::Redis, b).unwrap(), (3, 19));
    }

    #[test]
    fn counts_complete_memcached_replies_and_keeps_a_partial_one() {
        let b = b"STORED\r\nVALUE user1 0 3\r\nabc\r\nEND\r\nEND\r\nVALUE user2 0 3\r\nab";
        assert_eq!(replies(Proto::Memcached, b).unwrap(), (3, 40));
    }

    #[test]
    fn arguments_are_checked() {
        let args = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let ok = "--proto redis --target 127.0.0.1:6379 --ops 10 --conns 2 --pipeline 1 --records 5 --value-bytes 3";
        let a = parse(&args(ok)).unwrap();
        assert_eq!(
            (a.proto, a.ops, a.conns, a.records),
            (Proto::Redis, 10, 2, 5)
        );
        let e = parse(&args(&format!("{ok} --threads 2")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown argument `--threads`"), "{e}");
        let e = parse(&args(&ok.replace("--ops 10", "--ops ten")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--ops: `ten` is not a number"), "{e}");
        let e = parse(&args(&ok.replace("--conns 2", "--conns 0")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least 1"), "{e}");
    }

    #[test]
    fn an_error_reply_is_an_error() {
        assert!(replies(Proto::Redis, b"-ERR wrong\r\n").is_err());
        assert!(replies(Proto::Memcached, b"SERVER_ERROR out of memory\r\n").is_err());
    }

    #[test]
    fn the_table_is_half_gets_on_kvbench_keys() {
        let a = Args {
            proto: Proto::Redis,
            addr: "127.0.0.1:1".parse().unwrap(),
            ops: 1,
            conns: 1,
            pipeline: 1,
            records: 100,
            value_bytes: 10,
        };
        let t = table(&a);
        assert_eq!(t.len(), TABLE);
        let gets = t
            .iter()
            .filter(|r| r.starts_with(b"*2\r\n$3\r\nGET"))
            .count();
        assert_eq!(gets, TABLE / 2);
        let names: Vec<String> = (0..100).map(|k| KeyNamer::default().key(k)).collect();
        for r in &t {
            let s = String::from_utf8_lossy(r);
            assert!(
                names.iter().any(|n| s.contains(&format!("\r\n{n}\r\n"))),
                "{s}"
            );
        }
    }
}
