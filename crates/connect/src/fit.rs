//! What a target URL means for a benchmark, in the model's terms: the
//! protocol its scheme implies, how it is deployed, where clients start,
//! and what each protocol refuses of it. The command line checks a
//! `--target` with these and never names a protocol or topology itself
//! (issue 32).

use crate::url::{Family, Shape, TargetUrl, DEFAULT_NAMESPACE};
use kvbench_model::{Endpoints, Protocol, SystemKind, TopologyKind};
use std::net::SocketAddr;

impl Family {
    /// The protocol this family's schemes speak.
    pub fn protocol(self) -> Protocol {
        match self {
            Family::Resp => Protocol::Resp,
            Family::Memcache => Protocol::Memcache,
            Family::Aerospike => Protocol::Aerospike,
        }
    }
}

impl Shape {
    /// How a target of this shape is deployed.
    pub fn topology(self) -> TopologyKind {
        match self {
            Shape::Single => TopologyKind::Single,
            Shape::Cluster => TopologyKind::Cluster,
            Shape::Pool => TopologyKind::Pool,
            Shape::Sentinel => TopologyKind::Sentinel,
        }
    }
}

impl TargetUrl {
    /// Where clients start, given the URL's hosts resolved (`addrs`, in
    /// the URL's order, at least one): a cluster's seeds, a pool's nodes, a
    /// Sentinel group's sentinels, or the one server.
    pub fn endpoints(&self, addrs: &[SocketAddr]) -> Endpoints {
        match (self.shape, &self.group) {
            (Shape::Cluster, _) => Endpoints::Cluster(addrs.to_vec()),
            (Shape::Pool, _) => Endpoints::Pool(addrs.to_vec()),
            (Shape::Sentinel, Some(g)) => Endpoints::Sentinel {
                sentinels: addrs.to_vec(),
                group: g.clone(),
            },
            _ => Endpoints::Single(addrs[0]),
        }
    }

    /// Checks that the URL, its credentials complete, can be benchmarked
    /// as `system`, deleting keys when `deletes` (`--flush`,
    /// `--cleanup`), and gives an `aerospike://` URL without a namespace
    /// YCSB's.
    ///
    /// # Errors
    /// Why not, naming what to change (never the password).
    pub fn fit(&mut self, system: SystemKind, deletes: bool) -> Result<(), String> {
        let protocol = system.protocol();
        if self.family.is_some_and(|f| f.protocol() != protocol) {
            return Err(format!(
                "a {}:// URL cannot be benchmarked as --system {system}",
                self.scheme
            ));
        }
        match protocol {
            Protocol::Aerospike if deletes => return Err(
                "--cleanup and --flush are for the Redis and Memcached families: kvbench deletes nothing on an Aerospike it did not start (give an empty namespace)".into(),
            ),
            Protocol::Aerospike if self.password.is_some() && self.user.is_none() => return Err(
                "Aerospike logs in as a user: give user:password in the URL (or the user with --password-env/--password-file)".into(),
            ),
            Protocol::Aerospike => {
                self.namespace.get_or_insert_with(|| DEFAULT_NAMESPACE.to_string());
            }
            Protocol::Memcache if self.password.is_some() => {
                return Err("memcached's text protocol has no authentication; drop the password".into())
            }
            _ => {}
        }
        if self.user.is_some() && self.password.is_none() {
            return Err(format!(
                "user '{}' needs a password (in the URL, --password-env or --password-file)",
                self.user.as_deref().unwrap_or_default()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> TargetUrl {
        TargetUrl::parse(text).expect("a valid URL")
    }

    #[test]
    fn each_protocol_refuses_what_it_cannot_do() {
        let mut u = url("memcached://h:1");
        let e = u.fit(SystemKind::Redis, false).unwrap_err();
        assert_eq!(
            e,
            "a memcached:// URL cannot be benchmarked as --system redis"
        );
        assert!(url("redis://:pw@h:1").fit(SystemKind::Redis, true).is_ok());
        let e = url("h:1").fit(SystemKind::Aerospike, true).unwrap_err();
        assert!(e.starts_with("--cleanup and --flush"), "{e}");
        let mut u = url("aerospike://h:3000");
        u.fit(SystemKind::Aerospike, false).expect("fits");
        assert_eq!(u.namespace.as_deref(), Some(DEFAULT_NAMESPACE));
        let mut u = url("h:1");
        u.password = Some(crate::Secret::new("pw"));
        let e = u.clone().fit(SystemKind::Memcached, false).unwrap_err();
        assert!(e.contains("no authentication"), "{e}");
        let e = u.fit(SystemKind::Aerospike, false).unwrap_err();
        assert!(e.starts_with("Aerospike logs in as a user"), "{e}");
        let mut u = url("h:1");
        u.user = Some("app".into());
        let e = u.fit(SystemKind::Valkey, false).unwrap_err();
        assert!(e.starts_with("user 'app' needs a password"), "{e}");
    }

    #[test]
    fn endpoints_follow_the_urls_shape() {
        let addrs: Vec<SocketAddr> = vec!["127.0.0.1:1".parse().expect("addr")];
        let u = url("redis-sentinel://h:26379/mymaster");
        assert_eq!(u.shape.topology(), TopologyKind::Sentinel);
        assert_eq!(
            u.endpoints(&addrs),
            Endpoints::Sentinel {
                sentinels: addrs.clone(),
                group: "mymaster".into()
            }
        );
        let u = url("memcached://h:1,h:2");
        assert_eq!(u.endpoints(&addrs), Endpoints::Pool(addrs.clone()));
        assert_eq!(url("h:1").endpoints(&addrs), Endpoints::Single(addrs[0]));
        assert_eq!(Family::Memcache.protocol(), Protocol::Memcache);
    }
}
