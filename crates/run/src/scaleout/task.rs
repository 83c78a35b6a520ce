//! What a worker is told: one phase's configuration as JSON, the same for
//! every worker (each adds its own `--slice`), rebuilt into the
//! [`PhaseConfig`] the driver would have run itself.
//!
//! The workload travels as its effective YCSB properties, the form every
//! run already records to be repeatable, and is resolved again by the
//! same code; the password never travels (the worker reads it from its own
//! environment, [`PASSWORD_ENV`]), nor does a TLS client key
//! ([`TLS_KEY_ENV`]); TLS certificates travel as their PEM text, since the
//! worker's machine need not have the driver's files.

use anyhow::{anyhow, bail, Context, Result};
use kvbench_connect::{Access, Secret, TlsMaterial};
use kvbench_engine::route::ketama::Variant;
use kvbench_engine::{Arrival, Backoff, Io, PhaseConfig, PhaseKind, Rate, Retry, Topology, Window};
use kvbench_model::{Endpoints, SystemKind};
use kvbench_workload::{Origin, Properties, WorkloadSpec};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// The variable a worker reads the target's password from, when the task
/// says there is one. The driver sets it for the Spark job it starts; on a
/// cluster it must be in the executors' environment (docs/scale-out.md).
pub const PASSWORD_ENV: &str = "KVBENCH_WORKER_PASSWORD";

/// The variable a worker reads the TLS client key (PEM) from, when the
/// task says there is one; set and documented as [`PASSWORD_ENV`].
pub const TLS_KEY_ENV: &str = "KVBENCH_WORKER_TLS_KEY";

/// A TLS target's settings as a worker gets them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskTls {
    /// The CA certificates to trust (PEM); `None`: the worker's system store.
    pub ca_pem: Option<String>,
    /// The client certificate chain (PEM), for mutual TLS.
    pub cert_pem: Option<String>,
    /// Whether its key is in [`TLS_KEY_ENV`].
    pub key: bool,
    /// The name the server's certificate is checked against.
    pub server_name: String,
    /// Accept any server certificate.
    pub insecure: bool,
}

/// What a worker reads from its environment, never from the task.
#[derive(Debug, Default)]
pub struct WorkerSecrets {
    /// [`PASSWORD_ENV`].
    pub password: Option<String>,
    /// [`TLS_KEY_ENV`].
    pub tls_key: Option<String>,
}

impl WorkerSecrets {
    /// This process's.
    pub fn from_env() -> WorkerSecrets {
        WorkerSecrets {
            password: std::env::var(PASSWORD_ENV).ok(),
            tls_key: std::env::var(TLS_KEY_ENV).ok(),
        }
    }
}

/// One phase for a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerTask {
    /// `load` (insert the records) or `run` (the measured phase).
    pub phase: String,
    /// The server kind.
    pub system: SystemKind,
    /// The workload's name, as recorded.
    pub workload: String,
    /// Every workload property in effect.
    pub properties: Vec<(String, String)>,
    /// Where the phase connects (a server, a cluster's seeds, a pool's
    /// nodes, a Sentinel group's sentinels).
    pub endpoints: Endpoints,
    /// A pool's ring.
    pub pool_hash: Option<String>,
    /// Connections of the whole phase (not this worker's share).
    pub clients: u32,
    /// Requests in flight per connection.
    pub pipeline: u32,
    /// Threads per worker.
    pub threads: u32,
    /// Master seed.
    pub seed: u64,
    /// Request timeout.
    pub timeout_ms: u64,
    /// Connection set-up limit.
    pub connect_timeout_ms: u64,
    /// How lost connections are reopened (`MIN-MAX`; absent: they are not).
    #[serde(default)]
    pub reconnect: Option<String>,
    /// Times a failed request is sent again.
    #[serde(default)]
    pub max_retries: u32,
    /// The wait before it is (`MIN-MAX`; absent: the default).
    #[serde(default)]
    pub retry_backoff: Option<String>,
    /// Stall threshold (0: none).
    pub stall_ms: u64,
    /// Uncounted lead-in.
    pub warmup_ms: u64,
    /// Operations in the window (split over every client), or
    pub operations: Option<u64>,
    /// its length.
    pub duration_ms: Option<u64>,
    /// Open loop: operations per second of the whole phase.
    pub rate: Option<f64>,
    /// Open loop: `uniform` or `poisson`.
    pub arrival: Option<String>,
    /// `uring` or `tokio`.
    pub io: String,
    /// ACL user.
    pub user: Option<String>,
    /// Whether to AUTH with the password in [`PASSWORD_ENV`].
    pub password: bool,
    /// Redis logical database.
    pub db: u32,
    /// Aerospike namespace.
    pub namespace: Option<String>,
    /// TLS (`rediss://`).
    #[serde(default)]
    pub tls: Option<TaskTls>,
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

impl WorkerTask {
    /// The task for the phase `cfg`, whose workload was resolved from
    /// `properties`; `tls`, the TLS settings with their files read, when
    /// the target uses TLS.
    ///
    /// # Errors
    /// A TLS target without its settings.
    pub fn of(
        cfg: &PhaseConfig,
        properties: &[(String, String)],
        tls: Option<&TlsMaterial>,
    ) -> Result<WorkerTask> {
        let (phase, warmup, window, rate) = match cfg.kind {
            PhaseKind::Load => ("load", Duration::ZERO, None, None),
            PhaseKind::Run {
                warmup,
                window,
                rate,
            } => ("run", warmup, Some(window), rate),
        };
        if cfg.access.is_tls() && tls.is_none() {
            bail!("--workers: a TLS target without its TLS settings for the workers");
        }
        let (endpoints, pool_hash) = cfg.topology.endpoints();
        let (operations, duration_ms) = match window {
            Some(Window::Operations(n)) => (Some(n), None),
            Some(Window::Duration(d)) => (None, Some(ms(d))),
            None => (None, None),
        };
        Ok(WorkerTask {
            phase: phase.into(),
            system: cfg.system,
            workload: cfg.spec.name.clone(),
            properties: properties.to_vec(),
            endpoints,
            pool_hash: pool_hash.map(|v| v.as_str().to_string()),
            clients: cfg.clients,
            pipeline: cfg.pipeline,
            threads: cfg.threads,
            seed: cfg.seed,
            timeout_ms: ms(cfg.timeout),
            connect_timeout_ms: ms(cfg.connect_timeout),
            reconnect: cfg.reconnect.map(|b| b.to_string()),
            max_retries: cfg.retry.max,
            retry_backoff: Some(cfg.retry.backoff.to_string()),
            stall_ms: ms(cfg.stall),
            warmup_ms: ms(warmup),
            operations,
            duration_ms,
            rate: rate.map(|r| r.ops_per_s),
            arrival: rate.map(|r| r.arrival.as_str().to_string()),
            io: cfg.io.as_str().into(),
            user: cfg.access.user.clone(),
            password: cfg.access.password.is_some(),
            db: cfg.access.db,
            namespace: cfg.access.namespace.clone(),
            tls: tls.filter(|_| cfg.access.is_tls()).map(|t| TaskTls {
                ca_pem: t.ca_pem.clone(),
                cert_pem: t.cert_pem.clone(),
                key: t.key_pem.is_some(),
                server_name: t.server_name.clone(),
                insecure: t.insecure,
            }),
        })
    }

    /// The phase this task describes, with the password from `password`
    /// (the worker passes its [`PASSWORD_ENV`]).
    ///
    /// # Errors
    /// A message naming the field that does not make sense.
    pub fn phase(&self, secrets: WorkerSecrets) -> Result<PhaseConfig> {
        let mut props = Properties::new();
        for (k, v) in &self.properties {
            props.set(k, v, Origin::CommandLine);
        }
        let (mut spec, _) =
            WorkloadSpec::from_properties(&props).context("the task's workload properties")?;
        spec.name = self.workload.clone();
        let pool_hash = match &self.endpoints {
            Endpoints::Pool(_) => variant(self.pool_hash.as_deref().unwrap_or_default())?,
            _ => Variant::Libmemcached,
        };
        let topology = Topology::of(self.endpoints.clone(), pool_hash);
        let window = match (self.phase.as_str(), self.operations, self.duration_ms) {
            ("load", None, None) => None,
            ("run", Some(n), None) => Some(Window::Operations(n)),
            ("run", None, Some(d)) => Some(Window::Duration(Duration::from_millis(d))),
            ("run", _, _) => bail!("the task needs exactly one of operations and duration_ms"),
            ("load", _, _) => bail!("a load task has no operations or duration_ms"),
            (other, _, _) => bail!("the task's phase \"{other}\" is not load or run"),
        };
        let rate = match (self.rate, self.arrival.as_deref()) {
            (None, _) => None,
            (Some(ops_per_s), arrival) => Some(Rate {
                ops_per_s,
                arrival: match arrival {
                    None => Arrival::Uniform,
                    Some(a) => a.parse().map_err(|e| anyhow!("the task's arrival: {e}"))?,
                },
            }),
        };
        let io: Io = self.io.parse().map_err(|e| anyhow!("the task's io: {e}"))?;
        let tls = match &self.tls {
            None => None,
            Some(t) => {
                let key_pem = match (t.key, secrets.tls_key) {
                    (false, _) => None,
                    (true, Some(k)) => Some(Secret::new(k)),
                    (true, None) => bail!(
                        "the target needs a TLS client key: set {TLS_KEY_ENV} in the worker's environment"
                    ),
                };
                let material = TlsMaterial {
                    ca_pem: t.ca_pem.clone(),
                    cert_pem: t.cert_pem.clone(),
                    key_pem,
                    server_name: t.server_name.clone(),
                    insecure: t.insecure,
                };
                Some(material.build().context("the task's TLS settings")?)
            }
        };
        let password = match (self.password, secrets.password) {
            (false, _) => None,
            (true, Some(p)) => Some(Secret::new(p)),
            (true, None) => {
                bail!("the target needs a password: set {PASSWORD_ENV} in the worker's environment")
            }
        };
        Ok(PhaseConfig {
            topology,
            system: self.system,
            keys: spec.key_namer(),
            spec,
            kind: match window {
                None => PhaseKind::Load,
                Some(window) => PhaseKind::Run {
                    warmup: Duration::from_millis(self.warmup_ms),
                    window,
                    rate,
                },
            },
            clients: self.clients,
            pipeline: self.pipeline,
            threads: self.threads,
            seed: self.seed,
            timeout: Duration::from_millis(self.timeout_ms),
            connect_timeout: Duration::from_millis(self.connect_timeout_ms),
            reconnect: self
                .reconnect
                .as_deref()
                .map(Backoff::parse)
                .transpose()
                .map_err(|e| anyhow!("reconnect: {e}"))?,
            retry: Retry {
                max: self.max_retries,
                backoff: match &self.retry_backoff {
                    Some(b) => Backoff::parse(b).map_err(|e| anyhow!("retry_backoff: {e}"))?,
                    None => Retry::DEFAULT_BACKOFF,
                },
                // Refused with --workers (the driver would have to gather them).
                keep_failed_keys: false,
            },
            stall: Duration::from_millis(self.stall_ms),
            access: Arc::new(Access {
                user: self.user.clone(),
                password,
                db: self.db,
                tls,
                namespace: self.namespace.clone(),
            }),
            io,
        })
    }
}

fn variant(name: &str) -> Result<Variant> {
    Variant::ALL
        .into_iter()
        .find(|v| v.as_str() == name)
        .with_context(|| format!("the task's pool_hash \"{name}\" is not a known ring"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvbench_connect::Access;

    fn run_cfg() -> (PhaseConfig, Vec<(String, String)>) {
        let properties: Vec<(String, String)> = [
            ("recordcount", "500"),
            ("operationcount", "2000"),
            ("readproportion", "0.9"),
            ("updateproportion", "0.1"),
            ("requestdistribution", "zipfian"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut props = Properties::new();
        for (k, v) in &properties {
            props.set(k, v, Origin::CommandLine);
        }
        let (mut spec, _) = WorkloadSpec::from_properties(&props).expect("spec");
        spec.name = "mine".into();
        let cfg = PhaseConfig {
            topology: Topology::Pool(
                vec!["127.0.0.1:1".parse().expect("addr")],
                Variant::Spymemcached,
            ),
            // Named as `--system` names it.
            system: "memcached"
                .parse::<kvbench_model::SystemKind>()
                .expect("a system"),
            keys: spec.key_namer(),
            spec,
            kind: PhaseKind::Run {
                warmup: Duration::from_millis(1500),
                window: Window::Operations(2000),
                rate: Some(Rate {
                    ops_per_s: 1000.0,
                    arrival: Arrival::Poisson,
                }),
            },
            clients: 6,
            pipeline: 2,
            threads: 2,
            seed: 42,
            timeout: Duration::from_secs(3),
            connect_timeout: Duration::from_secs(5),
            reconnect: Some(Backoff::DEFAULT),
            retry: Retry {
                max: 2,
                ..Retry::default()
            },
            stall: Duration::from_secs(1),
            access: Arc::new(Access {
                user: Some("app".into()),
                password: Some(Secret::new("hunter2")),
                ..Access::plain()
            }),
            io: Io::Tokio,
        };
        (cfg, properties)
    }

    fn secrets(password: &str) -> WorkerSecrets {
        WorkerSecrets {
            password: Some(password.into()),
            tls_key: None,
        }
    }

    #[test]
    fn a_tls_task_carries_the_certificates_and_never_the_key() {
        let (mut cfg, props) = run_cfg();
        let material = TlsMaterial {
            ca_pem: None,
            cert_pem: Some("-----BEGIN CERTIFICATE-----\nnot one\n".into()),
            key_pem: Some(Secret::new("the-private-key")),
            server_name: "redis.example".into(),
            insecure: true,
        };
        let tls = TlsMaterial {
            cert_pem: None,
            key_pem: None,
            ..material.clone()
        }
        .build()
        .expect("an insecure configuration");
        cfg.access = Arc::new(Access {
            tls: Some(tls),
            ..(*cfg.access).clone()
        });
        let task = WorkerTask::of(&cfg, &props, Some(&material)).expect("task");
        let json = serde_json::to_string(&task).expect("json");
        assert!(!json.contains("the-private-key"), "{json}");
        let t = task.tls.as_ref().expect("tls");
        assert!(t.key && t.insecure);
        assert_eq!(t.server_name, "redis.example");
        assert_eq!(t.cert_pem, material.cert_pem);
        // The key comes from the worker's environment, or the task fails.
        let err = task.phase(secrets("hunter2")).expect_err("no key");
        assert!(err.to_string().contains(TLS_KEY_ENV), "{err}");
        // A TLS target without the material is refused, not run in clear.
        assert!(WorkerTask::of(&cfg, &props, None).is_err());
    }

    #[test]
    fn a_task_rebuilds_the_phase_it_was_made_from_without_carrying_the_password() {
        let (cfg, props) = run_cfg();
        let task = WorkerTask::of(&cfg, &props, None).expect("task");
        let json = serde_json::to_string(&task).expect("json");
        assert!(!json.contains("hunter2"), "{json}");
        let back: WorkerTask = serde_json::from_str(&json).expect("parse");
        let phase = back.phase(secrets("hunter2")).expect("phase");
        assert_eq!(phase.spec, cfg.spec);
        assert_eq!(phase.keys, cfg.keys);
        assert_eq!(phase.kind, cfg.kind);
        assert_eq!(
            format!("{:?}", phase.topology),
            format!("{:?}", cfg.topology)
        );
        assert_eq!(phase.access.password, cfg.access.password);
        assert_eq!(phase.access.user, cfg.access.user);
        assert_eq!(
            (phase.clients, phase.pipeline, phase.threads, phase.seed),
            (6, 2, 2, 42)
        );
        assert_eq!((phase.timeout, phase.stall), (cfg.timeout, cfg.stall));
        let err = back
            .phase(WorkerSecrets::default())
            .expect_err("no password");
        assert!(err.to_string().contains(PASSWORD_ENV), "{err}");
    }

    #[test]
    fn a_load_task_rebuilds_a_load_phase() {
        let (mut cfg, props) = run_cfg();
        cfg.kind = PhaseKind::Load;
        let task = WorkerTask::of(&cfg, &props, None).expect("task");
        assert_eq!(task.phase, "load");
        let back = task.phase(secrets("hunter2")).expect("phase");
        assert_eq!(back.kind, PhaseKind::Load);
        let broken = WorkerTask {
            phase: "warm".into(),
            ..task
        };
        assert!(broken.phase(WorkerSecrets::default()).is_err());
    }
}
