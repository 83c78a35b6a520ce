//! Redis Sentinel: the master of a monitored group, found through the
//! sentinels and followed across failovers.
//!
//! A client of a Sentinel deployment does not know its server's address:
//! it asks a sentinel (`SENTINEL GET-MASTER-ADDR-BY-NAME`) when it starts,
//! and moves when the sentinels announce a new master (`+switch-master`).
//! Following the announcement matters to what a failover measures: after a
//! forced failover the old master stays up and keeps accepting writes
//! until the sentinels turn it into a replica (about 8 s later), so a
//! client that waited to be disconnected would measure the old master, not
//! the failover. kvbench listens to every sentinel, as Jedis does, and
//! takes the first announcement of each move; connections opened again
//! (after a loss, or after a move) go to the master as last announced. It
//! does not ask again at each reconnection: in the second after a
//! failover a sentinel that has not heard of it yet still names the old
//! master, and a client that asked it would go back there.
//!
//! The sentinels are asked without AUTH or TLS (a sentinel's own
//! `requirepass` is not the master's); the master is reached with the
//! target's settings.

use kvbench_connect::Access;
use kvbench_proto::resp::{self, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

/// How long one question to a sentinel may take.
const ASK_TIMEOUT: Duration = Duration::from_millis(500);
/// How often the watcher looks whether the phase is over (its handle is
/// dropped), and how long it waits before subscribing again after losing
/// its sentinel.
const WATCH_TICK: Duration = Duration::from_millis(200);

/// The master of one group, as the sentinels last said.
#[derive(Debug)]
pub struct Sentinel {
    sentinels: Vec<SocketAddr>,
    name: String,
    master: Mutex<SocketAddr>,
    /// Failovers seen (`+switch-master`, or a new answer on re-asking).
    moves: AtomicU64,
}

impl Sentinel {
    /// Asks the sentinels, in order, for the master of `name`.
    ///
    /// # Errors
    /// A message naming each sentinel and what it answered.
    pub fn discover(
        sentinels: &[SocketAddr],
        name: &str,
        timeout: Duration,
    ) -> Result<Sentinel, String> {
        let mut why = Vec::new();
        for &s in sentinels {
            match master_of(s, name, timeout) {
                Ok(master) => {
                    return Ok(Sentinel {
                        sentinels: sentinels.to_vec(),
                        name: name.to_string(),
                        master: Mutex::new(master),
                        moves: AtomicU64::new(0),
                    })
                }
                Err(e) => why.push(format!("sentinel {s}: {e}")),
            }
        }
        Err(format!(
            "no sentinel named the master of '{name}': {}",
            why.join("; ")
        ))
    }

    /// The master as last learnt.
    pub fn master(&self) -> SocketAddr {
        *self.master.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many times the master has moved since discovery.
    pub fn moves(&self) -> u64 {
        self.moves.load(Ordering::Acquire)
    }

    /// The master's new address when it has moved since `seen` (a count
    /// of [`Sentinel::moves`]), which is brought up to date.
    pub fn moved(&self, seen: &mut u64) -> Option<SocketAddr> {
        let now = self.moves();
        (now != *seen).then(|| {
            *seen = now;
            self.master()
        })
    }

    fn learn(&self, master: SocketAddr) {
        let mut m = self.master.lock().unwrap_or_else(PoisonError::into_inner);
        if *m != master {
            *m = master;
            self.moves.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Starts a thread per sentinel that listens for `+switch-master`
    /// (subscribing again when its sentinel is lost) and records each
    /// move of this group's master. The threads end once every other
    /// handle on `self` is dropped (the phase is over).
    ///
    /// # Errors
    /// When a thread cannot be started.
    pub fn watch(self: &Arc<Self>) -> std::io::Result<()> {
        for &addr in &self.sentinels {
            let me = Arc::downgrade(self);
            std::thread::Builder::new()
                .name("kvbench-sentinel".into())
                .spawn(move || watch(&me, addr))?;
        }
        Ok(())
    }
}

/// One sentinel's watcher: subscribe, read announcements, subscribe again
/// when the sentinel is lost, until the phase is over.
fn watch(me: &Weak<Sentinel>, addr: SocketAddr) {
    while me.strong_count() > 0 {
        // A lost sentinel (or one that refused) is not an error of the
        // run: the others still announce.
        let _ = listen(me, addr);
        std::thread::sleep(WATCH_TICK);
    }
}

/// Listens on one sentinel until it is lost or the phase is over.
fn listen(me: &Weak<Sentinel>, addr: SocketAddr) -> Result<(), String> {
    let mut stream = kvbench_connect::open(addr, &Access::plain(), ASK_TIMEOUT)
        .map_err(|e| e.to_string())?
        .into_plain()
        .ok_or("not a plain connection")?;
    let mut request = Vec::new();
    resp::encode_command(&mut request, &[b"SUBSCRIBE", b"+switch-master"]);
    stream.write_all(&request).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(WATCH_TICK))
        .map_err(|e| e.to_string())?;
    // A failover between discovery and this subscription is not missed:
    // once subscribed, the master is asked again.
    let mut subscribed = false;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Some(s) = me.upgrade() else {
            return Ok(());
        };
        match stream.read(&mut chunk) {
            Ok(0) => return Err("closed".into()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e.to_string()),
        }
        while let Some((value, used)) = resp::parse_value(&buf).map_err(|e| e.to_string())? {
            buf.drain(..used);
            match announcement(&value) {
                Some(Announced::Subscribed) if !subscribed => {
                    subscribed = true;
                    if let Ok(master) = master_of(addr, &s.name, ASK_TIMEOUT) {
                        s.learn(master);
                    }
                }
                Some(Announced::Switch { name, to }) if name == s.name => s.learn(to),
                _ => {}
            }
        }
        if buf.len() > 1 << 20 {
            return Err("a message of more than 1 MiB".into());
        }
    }
}

/// What a message on the subscription says.
#[derive(Debug, PartialEq, Eq)]
enum Announced {
    /// The reply to `SUBSCRIBE`.
    Subscribed,
    /// `+switch-master <name> <old-ip> <old-port> <new-ip> <new-port>`.
    Switch { name: String, to: SocketAddr },
}

fn announcement(value: &Value) -> Option<Announced> {
    let (Value::Array(parts) | Value::Push(parts)) = value else {
        return None;
    };
    match parts.first()?.as_bytes()? {
        b"subscribe" => Some(Announced::Subscribed),
        b"message" => {
            let text = String::from_utf8_lossy(parts.get(2)?.as_bytes()?).into_owned();
            let words: Vec<&str> = text.split(' ').collect();
            let [name, _, _, ip, port] = words[..] else {
                return None;
            };
            Some(Announced::Switch {
                name: name.to_string(),
                to: resolve(ip, port)?,
            })
        }
        _ => None,
    }
}

fn resolve(host: &str, port: &str) -> Option<SocketAddr> {
    let port: u16 = port.parse().ok()?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (host, port).to_socket_addrs().ok()?.next()
}

/// `SENTINEL GET-MASTER-ADDR-BY-NAME name` on one sentinel.
fn master_of(sentinel: SocketAddr, name: &str, timeout: Duration) -> Result<SocketAddr, String> {
    let mut request = Vec::new();
    resp::encode_command(
        &mut request,
        &[b"SENTINEL", b"GET-MASTER-ADDR-BY-NAME", name.as_bytes()],
    );
    let value = kvbench_connect::exchange(
        sentinel,
        &Access::plain(),
        timeout,
        &request,
        1 << 16,
        resp::parse_value,
    )?;
    match value {
        Value::Array(parts) if parts.len() == 2 => {
            let text = |v: &Value| {
                v.as_bytes()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
            };
            let (Some(host), Some(port)) = (text(&parts[0]), text(&parts[1])) else {
                return Err("an address that is not host and port".into());
            };
            resolve(&host, &port).ok_or_else(|| format!("cannot resolve the master {host}:{port}"))
        }
        Value::Nil => Err(format!("monitors no master named '{name}'")),
        Value::Error(e) => Err(format!("SENTINEL GET-MASTER-ADDR-BY-NAME: {e}")),
        other => Err(format!("unexpected reply: {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::Bulk(s.as_bytes().to_vec())
    }

    #[test]
    fn switch_master_messages_name_the_group_and_its_new_master() {
        let msg = Value::Array(vec![
            bulk("message"),
            bulk("+switch-master"),
            bulk("mymaster 127.0.0.1 7001 127.0.0.1 7002"),
        ]);
        assert_eq!(
            announcement(&msg),
            Some(Announced::Switch {
                name: "mymaster".into(),
                to: "127.0.0.1:7002".parse().expect("addr"),
            })
        );
        let sub = Value::Push(vec![
            bulk("subscribe"),
            bulk("+switch-master"),
            Value::Integer(1),
        ]);
        assert_eq!(announcement(&sub), Some(Announced::Subscribed));
        let short = Value::Array(vec![bulk("message"), bulk("+switch-master"), bulk("m 1 2")]);
        assert_eq!(announcement(&short), None);
    }

    #[test]
    fn moves_are_seen_once_by_each_watcher() {
        let a: SocketAddr = "127.0.0.1:1".parse().expect("addr");
        let b: SocketAddr = "127.0.0.1:2".parse().expect("addr");
        let s = Sentinel {
            sentinels: vec![],
            name: "m".into(),
            master: Mutex::new(a),
            moves: AtomicU64::new(0),
        };
        let mut seen = 0;
        assert_eq!(s.moved(&mut seen), None);
        s.learn(a);
        assert_eq!(s.moved(&mut seen), None, "the same master is no move");
        s.learn(b);
        assert_eq!(s.moved(&mut seen), Some(b));
        assert_eq!(s.moved(&mut seen), None);
        assert_eq!(s.master(), b);
    }
}
