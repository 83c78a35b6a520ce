//! What a cell runs against: the servers kvbench starts for it (one
//! server, a cluster, a pool, a proxy, a Sentinel group, Aerospike nodes,
//! in namespaces or on loopback), or the target it reaches, checked before
//! anything starts and cleaned after; and how the engine connects to them.

use crate::settings::RunSettings;
use crate::target::Target;
use crate::usage::UsageError;
use crate::view::View;
use anyhow::{Context, Result};
use kvbench_connect::Access;
use kvbench_engine::Topology;
use kvbench_model::RunRecord;
use kvbench_servers::{Deployment, Hosts, Network, RemoteServer, ServerSpec};
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

/// Connection set-up limit; a loopback server that cannot accept within this
/// is not in a state worth measuring.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What kvbench starts for `s` (a kept deployment must have been started
/// from the same).
pub fn server_spec(s: &RunSettings) -> ServerSpec {
    ServerSpec {
        system: s.system,
        binary: s.server_binary.clone(),
        memory_limit_mb: match s.max_memory {
            Some(_) => crate::max_memory::mb(s),
            None => kvbench_servers::memory_limit_mb(s.system, &crate::dataset::data_size(s)),
        },
        eviction: s.eviction,
        extra_args: s.server_args.clone(),
    }
}

/// `--netns`: the run's private network, or `None` for loopback.
pub fn new_network(s: &RunSettings) -> Result<Option<Network>> {
    s.netns
        .map(|link| {
            let hosts = Network::hosts_for(s.topology, s.nodes as usize, s.replicas as usize);
            Network::create(hosts, link)
        })
        .transpose()
        .context("cannot create the network namespaces")
}

/// Starts what `s` deploys (or reaches its target), on `hosts`.
pub fn start(
    s: &RunSettings,
    rec: &mut RunRecord,
    hosts: Hosts<'_>,
) -> Result<Box<dyn Deployment>> {
    let Some(t) = &s.target else {
        let spec = server_spec(s);
        return Ok(kvbench_servers::start(kvbench_servers::Plan {
            spec: &spec,
            topology: s.topology,
            nodes: s.nodes as usize,
            replicas: s.replicas as usize,
            hosts,
        })?);
    };
    let remote = remote(t, s)?;
    rec.config.nodes = remote.nodes().len() as u32;
    if s.safety.flush {
        remote
            .flush()
            .with_context(|| format!("--flush on {}", t.redacted()))?;
    }
    Ok(Box::new(remote))
}

/// How the engine connects: the target's TLS and AUTH, or plain TCP to a
/// server kvbench started.
pub fn access(s: &RunSettings) -> Arc<Access> {
    match &s.target {
        Some(t) => t.access.clone(),
        // A private Aerospike's records go to the namespace kvbench configured.
        None => Arc::new(Access {
            namespace: kvbench_servers::private_namespace(s.system),
            ..Access::plain()
        }),
    }
}

/// The target's nodes, reached: a cluster's masters come from its seeds'
/// slot map (what the engine routes to is what gets probed).
pub fn remote(t: &Target, s: &RunSettings) -> Result<RemoteServer> {
    let reached =
        kvbench_engine::route::reach(s.system, &t.endpoints(), &t.access, CONNECT_TIMEOUT)
            .map_err(anyhow::Error::msg)?;
    let server = RemoteServer::connect(s.system, t.topology(), reached.nodes, t.access.clone())?;
    Ok(match reached.sentinels {
        Some((sentinels, group)) => server.behind_sentinels(sentinels, group),
        None => server,
    })
}

/// Before anything starts: the target answers and may be written
/// ([`preflight`]), or the server binary kvbench would start exists.
///
/// # Errors
/// [`UsageError`] naming the target or the binary.
pub fn ready(s: &RunSettings) -> Result<(), UsageError> {
    match &s.target {
        Some(t) => preflight(t, s),
        None => kvbench_servers::find_binary(s.system, s.server_binary.as_deref())
            .map(drop)
            .map_err(|e| UsageError(e.to_string())),
    }
}

/// Checks a target before any cell runs: it answers as the system, with
/// these credentials, and holds no keys unless kvbench may write among them
/// (`--allow-existing`) or empty it first (`--flush`). Bad input, not a
/// failed run: nothing is stored.
///
/// # Errors
/// [`UsageError`] naming the target (its URL redacted) and what is wrong.
pub fn preflight(t: &Target, s: &RunSettings) -> Result<(), UsageError> {
    let shown = t.redacted();
    let server = remote(t, s).map_err(|e| UsageError(format!("--target {shown}: {e:#}")))?;
    // As many connections as the run holds at once (the load's are fewer):
    // a connection limit is met here, in the server's words, not as a run
    // whose connections fail one by one.
    let held = s.clients.max(s.load_clients) + s.companion.as_ref().map_or(0, |c| c.clients);
    server
        .check_capacity(held)
        .map_err(|e| UsageError(format!("--target {shown}: {e}")))?;
    if s.no_load || s.safety.allow_existing || s.safety.flush {
        return Ok(());
    }
    let keys = server
        .keys()
        .map_err(|e| UsageError(format!("--target {shown}: {e}")))?;
    if keys > 0 {
        return Err(UsageError(format!(
            "--target {shown}: the database already holds {keys} keys; kvbench loads only into an empty one. Give --allow-existing to load among them (records of the same name are overwritten), --flush to delete them all first, or another database (redis://host:port/N)"
        )));
    }
    Ok(())
}

/// `--cleanup`: deletes the keys the cell wrote (`written`: record-number
/// ranges), also after a failed or interrupted run. A cleanup that fails
/// is a warning on the run: its measurements stand.
pub fn cleanup(
    s: &RunSettings,
    t: &Target,
    written: &[Range<u64>],
    rec: &mut RunRecord,
    live: &dyn View,
) {
    if written.is_empty() {
        return;
    }
    let topology = Topology::of(t.endpoints(), s.pool_hash);
    let job = kvbench_engine::cleanup::Cleanup {
        topology: &topology,
        system: s.system,
        spec: &s.spec,
        keys: s.spec.key_namer(),
        access: &t.access,
        timeout: s.timeout,
        ranges: written.to_vec(),
        clients: s.clients,
    };
    match kvbench_engine::cleanup::cleanup(&job) {
        Ok(done) => {
            if !live.quiet() {
                live.println(&format!(
                    "cleanup: {} deletions sent to {}, {} keys removed",
                    done.requests,
                    t.redacted(),
                    done.deleted
                ));
            }
        }
        Err(e) => rec.warnings.push(
            kvbench_model::Finding::Cleanup {
                target: t.redacted().to_string(),
                error: e.to_string(),
            }
            .into(),
        ),
    }
}
