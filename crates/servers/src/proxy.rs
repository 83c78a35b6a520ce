//! twemproxy (`nutcracker`, Debian's package) in front of a pool of private
//! servers (Memcached, or the Redis family with `redis: true`): the client
//! sees one address and the proxy hashes keys onto the pool.
//!
//! The configuration kvbench writes keeps twemproxy's own defaults (fnv1a_64
//! keys on a ketama ring, no timeout, no ejection) and says so, binds the
//! proxy and its stats port to loopback (or, with `--netns`, to the address
//! of its own namespace), and is recorded with the run.

use crate::binary::find_in_path;
use crate::cluster::probe_nodes;
use crate::ports::{self, Attempt};
use crate::process::{log_tail, ProcessGuard};
use crate::server::ServerVersion;
use crate::system::bind_reason;
use crate::{probe, Host, Hosts, Pool, ServerError, ServerSpec};
use kvbench_model::{NodeProbe, Probe, Protocol, Setting};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tempfile::TempDir;

const READY_TIMEOUT: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(20);
const QUERY_TIMEOUT: Duration = Duration::from_millis(500);

/// The pool's servers and the proxy in front of them; dropping it stops
/// the proxy, then the servers.
pub struct Proxied {
    proxy: ProcessGuard,
    addr: SocketAddr,
    binary: PathBuf,
    settings: Vec<Setting>,
    log_path: PathBuf,
    /// Removed after the proxy stopped (fields drop after `Drop::drop`).
    _dir: TempDir,
    /// Always `Some` but while [`Proxied::stop`] runs.
    backends: Option<Pool>,
}

impl Proxied {
    /// Starts `nodes` servers of `spec` and twemproxy in front of them
    /// (`binary`, or `nutcracker` on PATH), and returns once a request
    /// through the proxy is answered.
    ///
    /// # Errors
    /// [`ServerError::BinaryNotFound`] without twemproxy, any error of
    /// [`Pool::start`], or [`ServerError::StartFailed`] quoting the proxy's log.
    pub fn start(
        spec: &ServerSpec,
        nodes: usize,
        binary: Option<&Path>,
    ) -> Result<Proxied, ServerError> {
        Self::start_on(spec, nodes, binary, Hosts::Loopback)
    }

    /// [`Proxied::start`] with server `i` on `hosts`' host `i` and the proxy
    /// on host `nodes`: a proxy tier of its own, so with `--netns` the
    /// client's requests cross one link to the proxy and the proxy's cross
    /// another to the servers, as on separate machines.
    ///
    /// # Errors
    /// As [`Proxied::start`].
    pub fn start_on(
        spec: &ServerSpec,
        nodes: usize,
        binary: Option<&Path>,
        hosts: Hosts<'_>,
    ) -> Result<Proxied, ServerError> {
        let binary = find_in_path(
            binary.unwrap_or(Path::new("nutcracker")),
            "install it with `apt-get install nutcracker`",
        )?;
        let backends = Pool::start_on(spec, nodes, hosts)?;
        let host = hosts.host(nodes)?;
        let redis = spec.system.protocol() == Protocol::Resp;
        let (proxy, addr, settings, log_path, dir) =
            ports::retry_taken(|| start_proxy(&binary, &backends, redis, spec, &host))?;
        Ok(Proxied {
            proxy,
            addr,
            binary,
            settings,
            log_path,
            _dir: dir,
            backends: Some(backends),
        })
    }

    /// The proxy's address: the only one clients use.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The servers behind the proxy.
    /// The proxy's process id.
    pub fn proxy_pid(&self) -> u32 {
        self.proxy.pid()
    }

    /// The servers behind the proxy.
    pub fn backends(&self) -> &Pool {
        // Set at start, taken only by `stop`, which consumes `self`.
        self.backends.as_ref().expect("backends present until stop")
    }

    /// The proxy binary.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// The servers' settings, then the proxy's (names prefixed `twemproxy.`).
    pub fn settings(&self) -> Vec<Setting> {
        let mut all = self.backends().settings().to_vec();
        all.extend(self.settings.iter().cloned());
        all
    }

    /// What the servers behind the proxy say they are.
    ///
    /// # Errors
    /// As [`Pool::version`].
    pub fn version(&self) -> Result<ServerVersion, ServerError> {
        self.backends().version()
    }

    /// The servers' probes and the proxy's own resource use (role `proxy`:
    /// RSS and CPU, which the sums include; it holds no items).
    ///
    /// # Errors
    /// As [`Pool::probe`].
    pub fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        let mut p = probe_nodes(stage, &[("node", self.backends().nodes())])?;
        let alive = self.proxy.exit_status().is_none();
        let pid = self.proxy.pid();
        let rss = alive.then(|| probe::rss_bytes(pid).ok()).flatten();
        let cpu = alive.then(|| probe::cpu_seconds(pid).ok()).flatten();
        p.rss_bytes = p.rss_bytes.zip(rss).map(|(a, b)| a + b);
        p.cpu_seconds = p.cpu_seconds.zip(cpu).map(|(a, b)| a + b);
        p.nodes.push(NodeProbe {
            addr: self.addr.to_string(),
            role: "proxy".into(),
            rss_bytes: rss,
            cpu_seconds: cpu,
            ..NodeProbe::default()
        });
        Ok(p)
    }

    /// The servers' and the proxy's CPU seconds; `None` once any exited.
    pub fn cpu_seconds(&self) -> Option<f64> {
        if self.proxy.exit_status().is_some() {
            return None;
        }
        Some(self.backends().cpu_seconds()? + probe::cpu_seconds(self.proxy.pid()).ok()?)
    }

    /// Servers (or the proxy) that exited, as `addr (how)`.
    pub fn lost_nodes(&self) -> Vec<String> {
        let mut lost = self.backends().lost_nodes();
        if let Some(s) = self.proxy.exit_status() {
            lost.push(format!("twemproxy {} ({s})", self.addr));
        }
        lost
    }

    /// Stops the proxy, then the servers.
    ///
    /// # Errors
    /// As [`Pool::stop`]; or the proxy had exited before it was asked to.
    pub fn stop(mut self) -> Result<(), ServerError> {
        let ending = self.proxy.shutdown();
        let proxy_gone = matches!(ending, crate::process::Ending::ExitedBefore(_));
        let tail = log_tail(&self.log_path, 20);
        let pid = self.proxy.pid();
        let system = self.backends().nodes()[0].system();
        if let Some(b) = self.backends.take() {
            b.stop()?;
        }
        if proxy_gone {
            return Err(ServerError::Stop {
                system,
                pid,
                message: format!("twemproxy had already exited\n{tail}"),
            });
        }
        Ok(())
    }
}

impl Drop for Proxied {
    fn drop(&mut self) {
        self.proxy.shutdown();
    }
}

type Started = (ProcessGuard, SocketAddr, Vec<Setting>, PathBuf, TempDir);

/// One attempt on fresh ports.
fn start_proxy(
    binary: &Path,
    backends: &Pool,
    redis: bool,
    spec: &ServerSpec,
    host: &Host,
) -> Result<Started, Attempt> {
    let io = |what: &str| {
        let what = what.to_string();
        move |source: std::io::Error| Attempt::Failed(ServerError::Io { what, source })
    };
    let port = ports::free_loopback_port().map_err(io("pick a free loopback port"))?;
    let stats_port = ports::free_loopback_port().map_err(io("pick a free loopback port"))?;
    let dir = crate::workdir::create("twemproxy").map_err(io("create a temporary directory"))?;
    let netns = host.open_netns().map_err(Attempt::Failed)?;
    let ip = host.ip().to_string();
    let addr = SocketAddr::from((host.ip(), port));
    let servers: Vec<String> = backends
        .addrs()
        .iter()
        .map(|a| format!("   - {a}:1"))
        .collect();
    // hash_tag: keys sharing a `{...}` part go to one server, as in a Redis
    // Cluster, so a ZUNIONSTORE group (`{zset3}:0`, `{zset3}:dest:1`) can
    // run; YCSB's and memtier's keys have no braces and hash as before.
    let conf = format!(
        "kvbench:\n  listen: {addr}\n  hash: fnv1a_64\n  hash_tag: \"{{}}\"\n  distribution: ketama\n  redis: {redis}\n  auto_eject_hosts: false\n  servers:\n{}\n",
        servers.join("\n")
    );
    let conf_path = dir.path().join("nutcracker.yml");
    std::fs::write(&conf_path, conf).map_err(io("write the twemproxy configuration"))?;
    let log_path = dir.path().join("nutcracker.log");
    let path = |p: &Path| p.display().to_string();
    let args: Vec<String> = vec![
        "-c".into(),
        path(&conf_path),
        "-s".into(),
        stats_port.to_string(),
        "-a".into(),
        ip.clone(),
        "-o".into(),
        path(&log_path),
        "-p".into(),
        path(&dir.path().join("nutcracker.pid")),
    ];
    let proxy = ProcessGuard::spawn(binary, &args, dir.path(), &log_path, netns.as_ref())
        .map_err(io(&format!("start {}", binary.display())))?;
    let setting = |name: &str, value: &str, reason: &str| Setting {
        name: format!("twemproxy.{name}"),
        value: value.to_string(),
        reason: reason.to_string(),
    };
    let settings = vec![
        setting("listen", &ip, bind_reason(host.ip().into())),
        setting("hash", "fnv1a_64", "twemproxy's default, written out"),
        setting("distribution", "ketama", "twemproxy's default, written out"),
        setting(
            "auto_eject_hosts",
            "false",
            "twemproxy's default, written out",
        ),
        setting(
            "redis",
            &redis.to_string(),
            "the protocol of the servers behind it",
        ),
        setting(
            "stats-addr",
            &ip,
            "the proxy's own address only (its default is every interface)",
        ),
    ];
    let deadline = Instant::now() + READY_TIMEOUT;
    let mut last;
    loop {
        if let Some(status) = proxy.exit_status() {
            let tail = log_tail(&log_path, 20);
            let taken = tail.to_ascii_lowercase().contains("address already in use");
            return Err(Attempt::of(
                ServerError::StartFailed {
                    system: spec.system,
                    reason: format!("twemproxy exited during start-up ({status})"),
                    log_tail: tail,
                },
                taken,
            ));
        }
        match answers(addr, stats_port, redis) {
            Ok(()) => return Ok((proxy, addr, settings, log_path, dir)),
            Err(e) => last = e,
        }
        if Instant::now() >= deadline {
            proxy.shutdown();
            return Err(Attempt::Failed(ServerError::StartFailed {
                system: spec.system,
                reason: format!(
                    "twemproxy gave no answer on {addr} within {} s (last attempt: {last})",
                    READY_TIMEOUT.as_secs()
                ),
                log_tail: log_tail(&log_path, 20),
            }));
        }
        std::thread::sleep(POLL);
    }
}

/// The stats port says it is nutcracker, and a request through the proxy is
/// answered by a server behind it.
fn answers(addr: SocketAddr, stats_port: u16, redis: bool) -> Result<(), String> {
    let stats = SocketAddr::from((addr.ip(), stats_port));
    let mut s = TcpStream::connect_timeout(&stats, QUERY_TIMEOUT).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(QUERY_TIMEOUT))
        .map_err(|e| e.to_string())?;
    let mut text = Vec::new();
    let _ = s.read_to_end(&mut text);
    if !String::from_utf8_lossy(&text).contains("\"service\":\"nutcracker\"") {
        return Err(format!("{stats} is not twemproxy's stats port"));
    }
    let (request, expect): (&[u8], &[u8]) = if redis {
        (b"*2\r\n$6\r\nEXISTS\r\n$13\r\nkvbench:ready\r\n", b":")
    } else {
        (b"get kvbench:ready\r\n", b"END\r\n")
    };
    let mut c = TcpStream::connect_timeout(&addr, QUERY_TIMEOUT).map_err(|e| e.to_string())?;
    c.set_read_timeout(Some(QUERY_TIMEOUT))
        .map_err(|e| e.to_string())?;
    c.write_all(request).map_err(|e| e.to_string())?;
    let mut reply = [0u8; 64];
    let n = c.read(&mut reply).map_err(|e| e.to_string())?;
    if reply[..n].starts_with(expect) {
        Ok(())
    } else {
        Err(format!(
            "unexpected reply through the proxy: {:?}",
            String::from_utf8_lossy(&reply[..n])
        ))
    }
}
