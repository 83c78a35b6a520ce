//! What `--target` and its password and TLS flags resolve to, checked
//! before anything runs: a bad URL, an unreadable password file, a CA that
//! does not verify, a host that does not answer or a password it refuses
//! are bad input (exit 2, nothing stored), not failed runs.

use crate::args::BenchArgs;
use crate::exit::UsageError;
use kvbench_connect::{Access, Secret, TargetUrl, TlsOptions};
use kvbench_model::{SystemKind, TopologyKind};
use kvbench_run::target::{Safety, Target};
use std::net::ToSocketAddrs;

/// Resolves `b.target` for `system`; `None` when there is none.
///
/// # Errors
/// [`UsageError`] naming the flag, file or host that is wrong.
pub fn resolve(b: &BenchArgs, system: SystemKind) -> Result<Option<Target>, UsageError> {
    let tls = TlsOptions {
        ca_file: b.tls_ca.clone(),
        cert_file: b.tls_cert.clone(),
        key_file: b.tls_key.clone(),
        server_name: b.tls_server_name.clone(),
        insecure: b.tls_insecure,
    };
    let Some(text) = &b.target else {
        let stray = [
            (b.password_env.is_some(), "--password-env"),
            (b.password_file.is_some(), "--password-file"),
            (tls.any(), "--tls-*"),
            (b.flush, "--flush"),
            (b.allow_existing, "--allow-existing"),
            (b.cleanup, "--cleanup"),
        ];
        if let Some((_, flag)) = stray.iter().find(|(given, _)| *given) {
            return Err(UsageError(format!(
                "{flag} needs --target: a server kvbench starts is private, empty and stopped after the run"
            )));
        }
        return Ok(None);
    };
    let mut url = TargetUrl::parse(text).map_err(|e| UsageError(format!("--target: {e}")))?;
    let shown = url.redacted();
    let bad = |m: String| UsageError(format!("--target {shown}: {m}"));
    let typed: TopologyKind = b
        .topology
        .parse()
        .map_err(|e| UsageError(format!("--topology: {e}")))?;
    // `--topology` left at its default asks nothing of the URL.
    let shape = url.shape.topology();
    if typed != TopologyKind::default() && typed != shape {
        return Err(bad(format!(
            "--topology {} does not match the URL (use redis-cluster:// for a cluster, redis-sentinel://h:p/GROUP for a Sentinel group, memcached://h:p,h:p for a pool; kvbench starts no twemproxy for a target)",
            b.topology
        )));
    }
    if let Some(password) = password_from_flags(b)? {
        if url.password.is_some() {
            return Err(bad(
                "the URL has a password and --password-env/--password-file gives another; give one"
                    .into(),
            ));
        }
        url.password = Some(password);
    }
    url.fit(system, b.cleanup || b.flush).map_err(bad)?;
    let (tls_config, tls_material) = match (url.tls, tls.any()) {
        (true, _) => {
            let host = &url.hosts[0].host;
            let config = tls.build(host).map_err(|e| UsageError(e.to_string()))?;
            let material = tls.material(host).map_err(|e| UsageError(e.to_string()))?;
            (Some(config), Some(material))
        }
        (false, true) => {
            return Err(bad(
                "--tls-* flags need a TLS URL (rediss:// or rediss-cluster://)".into(),
            ))
        }
        (false, false) => (None, None),
    };
    let mut addrs = Vec::with_capacity(url.hosts.len());
    for hp in &url.hosts {
        let addr = (hp.host.as_str(), hp.port)
            .to_socket_addrs()
            .map_err(|e| bad(format!("cannot resolve host '{}': {e}", hp.host)))?
            .next()
            .ok_or_else(|| bad(format!("host '{}' has no address", hp.host)))?;
        addrs.push(addr);
    }
    let access = Access {
        user: url.user.clone(),
        password: url.password.clone(),
        db: url.db,
        tls: tls_config,
        namespace: url.namespace.clone(),
    };
    Ok(Some(Target::new(url, addrs, access, tls_material)))
}

/// The password from `--password-env` or `--password-file`, if either is given.
fn password_from_flags(b: &BenchArgs) -> Result<Option<Secret>, UsageError> {
    if let Some(var) = &b.password_env {
        let value = std::env::var(var).map_err(|_| {
            UsageError(format!(
                "--password-env {var}: the environment variable is not set (or not UTF-8)"
            ))
        })?;
        if value.is_empty() {
            return Err(UsageError(format!(
                "--password-env {var}: the environment variable is empty"
            )));
        }
        if value.len() > kvbench_workload::input::SECRET_LIMIT || value.contains(['\n', '\r']) {
            return Err(UsageError(format!(
                "--password-env {var}: not one line of at most {} bytes, so not a password",
                kvbench_workload::input::SECRET_LIMIT
            )));
        }
        return Ok(Some(Secret::new(value)));
    }
    if let Some(path) = &b.password_file {
        let first = kvbench_workload::input::read_first_line(path)
            .map_err(|e| UsageError(format!("--password-file {e}")))?;
        return Ok(Some(Secret::new(first)));
    }
    Ok(None)
}

/// The safety flags.
pub fn safety(b: &BenchArgs) -> Safety {
    Safety {
        flush: b.flush,
        allow_existing: b.allow_existing,
        cleanup: b.cleanup,
    }
}
