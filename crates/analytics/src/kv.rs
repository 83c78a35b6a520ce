//! A blocking, batched key-value connection for the analytics drivers:
//! each call sends one batch of requests and reads every reply before it
//! returns (Redis: one `MGET` / `MSET`; Memcached: multi-key `get`s and
//! pipelined `set`s). Map/reduce steps move whole partitions, so batches of
//! hundreds of keys keep the server, not the round trips, the limit.

use anyhow::{bail, Context, Result};
use kvbench_model::SystemKind;
use kvbench_proto::{memcache_text as mc, resp};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long one batch may go without a reply.
const TIMEOUT: Duration = Duration::from_secs(60);
/// Keys per Memcached `get` line (its lines stay short).
const MC_KEYS_PER_GET: usize = 100;

/// One item of a Memcached `get` reply: key, flags, data.
type McValue = (Vec<u8>, u32, Vec<u8>);

/// The wire protocol of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Redis and Valkey.
    Resp,
    /// Memcached's text protocol.
    Memcache,
}

impl Wire {
    /// The store an implementation name (`redis`, `valkey`, `memcached`,
    /// with or without `-lua`) runs on, and its wire; `None` for a name
    /// that is not a store (`reference`, `spark`), never a guess.
    pub fn store(imp: &str) -> Option<(SystemKind, Wire)> {
        let system = match imp.trim_end_matches("-lua") {
            "redis" => SystemKind::Redis,
            "valkey" => SystemKind::Valkey,
            "memcached" => SystemKind::Memcached,
            _ => return None,
        };
        let wire = match system.protocol() {
            kvbench_model::Protocol::Memcache => Wire::Memcache,
            _ => Wire::Resp,
        };
        Some((system, wire))
    }
}

/// One connection.
pub struct Kv {
    sock: TcpStream,
    wire: Wire,
    wbuf: Vec<u8>,
    rbuf: Vec<u8>,
    /// Commands sent (an `MGET` of 500 keys is one; a Memcached `get` line
    /// of 100 keys is one).
    pub requests: u64,
}

impl Kv {
    /// Connects to `addr`.
    ///
    /// # Errors
    /// When it cannot connect.
    pub fn connect(addr: SocketAddr, wire: Wire) -> Result<Kv> {
        let sock = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .with_context(|| format!("cannot connect to {addr}"))?;
        sock.set_nodelay(true)?;
        sock.set_read_timeout(Some(TIMEOUT))?;
        sock.set_write_timeout(Some(TIMEOUT))?;
        Ok(Kv {
            sock,
            wire,
            wbuf: Vec::with_capacity(1 << 16),
            rbuf: Vec::with_capacity(1 << 16),
            requests: 0,
        })
    }

    /// Sends a raw command (Redis) and returns its reply.
    ///
    /// # Errors
    /// I/O, or a reply that is not RESP.
    pub fn command(&mut self, args: &[&[u8]]) -> Result<resp::Value> {
        self.wbuf.clear();
        resp::encode_command(&mut self.wbuf, args);
        self.requests += 1;
        self.flush()?;
        self.read_resp()
    }

    /// One key's value by a plain `GET` (Redis) or a one-key `get`
    /// (Memcached): the fine-grained request of paper D's set/get test,
    /// where [`Kv::get_many`] batches.
    ///
    /// # Errors
    /// I/O, an error reply, or a reply that does not parse.
    pub fn get_one(&mut self, key: &[u8], out: &mut Vec<Option<Vec<u8>>>) -> Result<()> {
        match self.wire {
            Wire::Resp => {
                out.clear();
                match self.command(&[b"GET", key])? {
                    resp::Value::Bulk(b) => out.push(Some(b)),
                    resp::Value::Nil => out.push(None),
                    other => bail!("GET answered {other:?}"),
                }
                Ok(())
            }
            Wire::Memcache => self.get_many(&[key], out),
        }
    }

    /// Stores one `(key, value)` by a plain `SET` (Redis) or `set`
    /// (Memcached).
    ///
    /// # Errors
    /// I/O, or a reply other than success.
    pub fn set_one(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        match self.wire {
            Wire::Resp => match self.command(&[b"SET", key, value])? {
                resp::Value::Status(_) => Ok(()),
                other => bail!("SET answered {other:?}"),
            },
            Wire::Memcache => self.set_many(&[(key, value)]),
        }
    }

    /// The values of `keys`, in order (`None`: not stored), into `out`.
    ///
    /// # Errors
    /// I/O, an error reply, or a reply that does not parse.
    pub fn get_many<K: AsRef<[u8]>>(
        &mut self,
        keys: &[K],
        out: &mut Vec<Option<Vec<u8>>>,
    ) -> Result<()> {
        out.clear();
        if keys.is_empty() {
            return Ok(());
        }
        self.wbuf.clear();
        match self.wire {
            Wire::Resp => {
                let mut args: Vec<&[u8]> = Vec::with_capacity(keys.len() + 1);
                args.push(b"MGET");
                args.extend(keys.iter().map(AsRef::as_ref));
                resp::encode_command(&mut self.wbuf, &args);
                self.requests += 1;
                self.flush()?;
                match self.read_resp()? {
                    resp::Value::Array(items) if items.len() == keys.len() => {
                        out.extend(items.into_iter().map(|v| match v {
                            resp::Value::Bulk(b) => Some(b),
                            _ => None,
                        }));
                    }
                    other => bail!("MGET of {} keys answered {other:?}", keys.len()),
                }
            }
            Wire::Memcache => {
                let lines = keys.chunks(MC_KEYS_PER_GET);
                let n = lines.len();
                for line in lines {
                    self.wbuf.extend_from_slice(b"get");
                    for k in line {
                        self.wbuf.push(b' ');
                        self.wbuf.extend_from_slice(k.as_ref());
                    }
                    self.wbuf.extend_from_slice(b"\r\n");
                }
                self.requests += n as u64;
                self.flush()?;
                let mut found = std::collections::HashMap::with_capacity(keys.len());
                for _ in 0..n {
                    for (k, _, data) in self.read_mc_values()? {
                        found.insert(k, data);
                    }
                }
                out.extend(keys.iter().map(|k| found.remove(k.as_ref())));
            }
        }
        Ok(())
    }

    /// Stores every `(key, value)` of `items`.
    ///
    /// # Errors
    /// I/O, or a reply other than success.
    pub fn set_many<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, items: &[(K, V)]) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        self.wbuf.clear();
        match self.wire {
            Wire::Resp => {
                let mut args: Vec<&[u8]> = Vec::with_capacity(2 * items.len() + 1);
                args.push(b"MSET");
                for (k, v) in items {
                    args.push(k.as_ref());
                    args.push(v.as_ref());
                }
                resp::encode_command(&mut self.wbuf, &args);
                self.requests += 1;
                self.flush()?;
                match self.read_resp()? {
                    resp::Value::Status(_) => Ok(()),
                    other => bail!("MSET of {} keys answered {other:?}", items.len()),
                }
            }
            Wire::Memcache => {
                for (k, v) in items {
                    mc::encode_set(&mut self.wbuf, k.as_ref(), 0, 0, v.as_ref());
                }
                self.requests += items.len() as u64;
                self.flush()?;
                for (k, _) in items {
                    let line = self.read_line()?;
                    if line != b"STORED" {
                        bail!(
                            "set {} answered {}",
                            String::from_utf8_lossy(k.as_ref()),
                            String::from_utf8_lossy(&line)
                        );
                    }
                }
                Ok(())
            }
        }
    }

    fn flush(&mut self) -> Result<()> {
        self.sock.write_all(&self.wbuf).context("send")?;
        Ok(())
    }

    /// Reads more bytes into the read buffer.
    fn fill(&mut self) -> Result<()> {
        let mut chunk = [0u8; 1 << 16];
        let n = self.sock.read(&mut chunk).context("receive")?;
        if n == 0 {
            bail!("the server closed the connection");
        }
        self.rbuf.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    fn read_resp(&mut self) -> Result<resp::Value> {
        loop {
            if let Some((v, used)) = resp::parse_value(&self.rbuf)? {
                self.rbuf.drain(..used);
                if let resp::Value::Error(e) = &v {
                    bail!("the server answered: {e}");
                }
                return Ok(v);
            }
            self.fill()?;
        }
    }

    fn read_mc_values(&mut self) -> Result<Vec<McValue>> {
        loop {
            if let Some((v, used)) = mc::parse_values(&self.rbuf)? {
                self.rbuf.drain(..used);
                return Ok(v);
            }
            self.fill()?;
        }
    }

    fn read_line(&mut self) -> Result<Vec<u8>> {
        loop {
            if let Some(i) = self.rbuf.windows(2).position(|w| w == b"\r\n") {
                let line = self.rbuf[..i].to_vec();
                self.rbuf.drain(..i + 2);
                return Ok(line);
            }
            self.fill()?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_named_exactly_and_nothing_else_is_taken_for_memcached() {
        assert_eq!(
            Wire::store("redis-lua"),
            Some((SystemKind::Redis, Wire::Resp))
        );
        assert_eq!(
            Wire::store("valkey"),
            Some((SystemKind::Valkey, Wire::Resp))
        );
        assert_eq!(
            Wire::store("memcached"),
            Some((SystemKind::Memcached, Wire::Memcache))
        );
        for not_a_store in ["reference", "spark", "memcache", ""] {
            assert_eq!(Wire::store(not_a_store), None, "{not_a_store}");
        }
    }

    /// The single-key requests against real servers: what is set is got
    /// back, a key never set is `None`, and each is one request.
    #[test]
    fn one_key_set_and_get_round_trip_on_both_wires() {
        for name in ["redis", "memcached"] {
            let (system, wire) = Wire::store(name).expect("a store");
            let server = kvbench_servers::Server::start(&kvbench_servers::ServerSpec::new(system))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut kv = Kv::connect(server.addr(), wire).expect("connects");
            let mut out = Vec::new();
            kv.set_one(b"pr:r:1", &[1, 2, 3, 4, 5, 6, 7, 8])
                .expect("set");
            kv.get_one(b"pr:r:1", &mut out).expect("get");
            assert_eq!(out, [Some(vec![1, 2, 3, 4, 5, 6, 7, 8])], "{name}");
            kv.get_one(b"pr:r:2", &mut out).expect("get a missing key");
            assert_eq!(out, [None], "{name}");
            assert_eq!(kv.requests, 3, "{name}: one request each");
            drop(kv);
            server.stop().expect("stops");
        }
    }
}
