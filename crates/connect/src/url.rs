//! Target URLs: `redis://[user:password@]host:port[/db]`, `rediss://` (TLS),
//! `redis-cluster://host:port,host:port` (seed nodes), `rediss-cluster://`,
//! `redis-sentinel://host:port[,host:port...]/GROUP[/db]` (sentinels of a
//! group whose master kvbench follows; port 26379 when absent),
//! `memcached://host:port[,host:port...]` (a pool when several), `valkey://`
//! and `valkeys://` as aliases, `aerospike://[user:password@]host:port[,host:port...][/namespace]`
//! (seed nodes of a cluster; the namespace defaults to `ycsb`, YCSB's), or a
//! bare `HOST:PORT`.
//!
//! Parsed by hand because the common URL crates treat a comma-separated
//! host list as an invalid host. The password is taken out into a
//! [`Secret`] at once, and [`TargetUrl::redacted`] is the only form of the
//! URL that is ever printed or stored.

use crate::Secret;
use std::fmt;

/// The namespace of an `aerospike://` URL without one: YCSB's
/// `as.namespace` default.
pub const DEFAULT_NAMESPACE: &str = "ycsb";

/// Which protocol a scheme implies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// redis, rediss, valkey, valkeys, redis-cluster, rediss-cluster.
    Resp,
    /// memcached.
    Memcache,
    /// aerospike (its own protocol, through its client library).
    Aerospike,
}

/// How the target is deployed, as the URL says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One server.
    Single,
    /// A Redis Cluster reached through seed nodes.
    Cluster,
    /// Several independent servers, keys placed by the client.
    Pool,
    /// The master of a Sentinel group, reached through its sentinels.
    Sentinel,
}

/// One `host:port` as written (the host name is kept for TLS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    /// Name or address, without brackets.
    pub host: String,
    /// Port.
    pub port: u16,
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// A parsed target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetUrl {
    /// The scheme as written; empty for a bare `HOST:PORT`.
    pub scheme: String,
    /// The protocol the scheme implies (`None` for a bare `HOST:PORT`).
    pub family: Option<Family>,
    /// Single server, cluster or pool.
    pub shape: Shape,
    /// `rediss`, `valkeys`, `rediss-cluster`.
    pub tls: bool,
    /// At least one.
    pub hosts: Vec<HostPort>,
    /// ACL user (`None`: the default user).
    pub user: Option<String>,
    /// From the URL; may also come from elsewhere (see the CLI).
    pub password: Option<Secret>,
    /// Redis logical database (`/N`), 0 when absent.
    pub db: u32,
    /// `aerospike://`: the namespace (the path), `ycsb` when absent.
    pub namespace: Option<String>,
    /// `redis-sentinel://`: the group the sentinels are asked about.
    pub group: Option<String>,
}

/// Why a target URL cannot be used; the message never holds the password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UrlError(String);

impl TargetUrl {
    /// Parses `text`.
    ///
    /// # Errors
    /// [`UrlError`] naming the part that is wrong.
    pub fn parse(text: &str) -> Result<TargetUrl, UrlError> {
        let err = |m: String| Err(UrlError(m));
        let Some((scheme, rest)) = text.split_once("://") else {
            let hosts = host_list(text, None)?;
            if hosts.len() != 1 {
                return err(format!(
                    "'{text}' names several hosts; use redis-cluster://, memcached:// or a single HOST:PORT"
                ));
            }
            return Ok(TargetUrl {
                scheme: String::new(),
                family: None,
                shape: Shape::Single,
                tls: false,
                hosts,
                user: None,
                password: None,
                db: 0,
                namespace: None,
                group: None,
            });
        };
        let (family, shape, tls, default_port) = match scheme {
            "redis" | "valkey" => (Family::Resp, Shape::Single, false, 6379),
            "rediss" | "valkeys" => (Family::Resp, Shape::Single, true, 6379),
            "redis-cluster" | "valkey-cluster" => (Family::Resp, Shape::Cluster, false, 6379),
            "rediss-cluster" | "valkeys-cluster" => (Family::Resp, Shape::Cluster, true, 6379),
            "redis-sentinel" | "valkey-sentinel" => (Family::Resp, Shape::Sentinel, false, 26379),
            "memcached" => (Family::Memcache, Shape::Single, false, 11211),
            "aerospike" => (Family::Aerospike, Shape::Single, false, 3000),
            other => {
                return err(format!(
                    "unknown scheme '{other}://' (use redis://, rediss://, redis-cluster://, rediss-cluster://, redis-sentinel://, valkey://, memcached://, aerospike:// or HOST:PORT)"
                ))
            }
        };
        if rest.contains(['?', '#']) {
            return err(format!(
                "{scheme}:// URL with a query or fragment: kvbench takes TLS and password settings as flags"
            ));
        }
        let (userinfo, rest) = match rest.rsplit_once('@') {
            Some((u, r)) => (Some(u), r),
            None => (None, rest),
        };
        let (hosts_text, path) = match rest.split_once('/') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        };
        let hosts = host_list(hosts_text, Some(default_port))?;
        let shape = match (shape, family, hosts.len()) {
            (Shape::Single, Family::Memcache, n) if n > 1 => Shape::Pool,
            // Seeds of one cluster: the client library finds the rest.
            (Shape::Single, Family::Aerospike, n) if n > 1 => Shape::Cluster,
            (Shape::Single, Family::Resp, n) if n > 1 => {
                return err(format!(
                    "{scheme}:// names {n} hosts; for a cluster use {scheme}-cluster://"
                ))
            }
            (s, ..) => s,
        };
        let namespace = match (family, path) {
            (Family::Aerospike, None | Some("")) => Some(DEFAULT_NAMESPACE.to_string()),
            (Family::Aerospike, Some(p)) => {
                if p.len() > 31
                    || !p
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    return err(format!(
                        "aerospike:// namespace '{p}' is not a namespace name (up to 31 letters, digits, '_' or '-')"
                    ));
                }
                Some(p.to_string())
            }
            _ => None,
        };
        // A Sentinel URL's path is the group, then the database.
        let (group, path) = match (shape, path) {
            (Shape::Sentinel, Some(p)) if !p.is_empty() => {
                let (g, db) = match p.split_once('/') {
                    Some((g, db)) => (g, Some(db)),
                    None => (p, None),
                };
                if g.is_empty() {
                    return err(format!("{scheme}:// needs the group's name: {scheme}://host:26379/GROUP"));
                }
                (Some(decode(g, "group name")?), db)
            }
            (Shape::Sentinel, _) => {
                return err(format!(
                    "{scheme}:// needs the group's name: {scheme}://host:26379/GROUP (the name the sentinels monitor)"
                ))
            }
            (_, p) => (None, p),
        };
        let path = path.filter(|_| family != Family::Aerospike);
        let db = match path {
            None | Some("") => 0,
            Some(p) => {
                let Ok(db) = p.parse::<u32>() else {
                    return err(format!("{scheme}:// database '/{p}' is not a number"));
                };
                if (family == Family::Memcache || shape == Shape::Cluster) && db != 0 {
                    return err(format!("{scheme}:// has no databases; remove '/{p}'"));
                }
                db
            }
        };
        let (user, password) = match userinfo {
            None => (None, None),
            Some(info) => {
                let (u, p) = match info.split_once(':') {
                    Some((u, p)) => (u, Some(p)),
                    None => (info, None),
                };
                let user = (!u.is_empty())
                    .then(|| decode(u, "user name"))
                    .transpose()?;
                let password = p
                    .map(|p| decode(p, "password").map(Secret::new))
                    .transpose()?;
                (user, password)
            }
        };
        if family == Family::Memcache && (user.is_some() || password.is_some()) {
            return err(
                "memcached:// with a user or password: the text protocol has no authentication"
                    .to_string(),
            );
        }
        Ok(TargetUrl {
            scheme: scheme.to_string(),
            family: Some(family),
            shape,
            tls,
            hosts,
            user,
            password,
            db,
            namespace,
            group,
        })
    }

    /// The URL with the password replaced by `***`: the only form that is
    /// printed or stored.
    pub fn redacted(&self) -> String {
        let hosts: Vec<String> = self.hosts.iter().map(ToString::to_string).collect();
        if self.scheme.is_empty() {
            return hosts.join(",");
        }
        let mut s = format!("{}://", self.scheme);
        match (&self.user, &self.password) {
            (Some(u), Some(_)) => s.push_str(&format!("{u}:***@")),
            (Some(u), None) => s.push_str(&format!("{u}@")),
            (None, Some(_)) => s.push_str(":***@"),
            (None, None) => {}
        }
        s.push_str(&hosts.join(","));
        if let Some(g) = &self.group {
            s.push_str(&format!("/{g}"));
        }
        if self.db != 0 {
            s.push_str(&format!("/{}", self.db));
        }
        if let Some(ns) = &self.namespace {
            s.push_str(&format!("/{ns}"));
        }
        s
    }
}

/// `host:port[,host:port...]`, IPv6 hosts in brackets; a missing port is
/// `default_port` (none for a bare target).
fn host_list(text: &str, default_port: Option<u16>) -> Result<Vec<HostPort>, UrlError> {
    if text.is_empty() {
        return Err(UrlError("the target names no host".to_string()));
    }
    text.split(',')
        .map(|one| host_port(one, default_port))
        .collect()
}

fn host_port(text: &str, default_port: Option<u16>) -> Result<HostPort, UrlError> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            return Err(UrlError(format!(
                "'{text}': unclosed '[' in an IPv6 address"
            )));
        };
        (host, after.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return Err(UrlError(format!("'{text}' has no host name")));
    }
    let port = match (port, default_port) {
        (Some(p), _) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| UrlError(format!("'{text}': '{p}' is not a port (1-65535)")))?,
        (None, Some(d)) => d,
        (None, None) => {
            return Err(UrlError(format!(
                "'{text}' has no port (expected HOST:PORT)"
            )))
        }
    };
    Ok(HostPort {
        host: host.to_string(),
        port,
    })
}

/// Percent-decoding of a URL's user or password. The message names what was
/// being decoded, never its text.
fn decode(text: &str, what: &str) -> Result<String, UrlError> {
    let bad = || UrlError(format!("the URL's {what} has a bad %-escape"));
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or_else(bad)?;
            let hex = std::str::from_utf8(hex).map_err(|_| bad())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| UrlError(format!("the URL's {what} is not UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp(host: &str, port: u16) -> HostPort {
        HostPort {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn a_full_redis_url() {
        let t = TargetUrl::parse("rediss://app:p%40ss:w@cache.example.com:6380/2").expect("ok");
        assert_eq!(t.family, Some(Family::Resp));
        assert_eq!(t.shape, Shape::Single);
        assert!(t.tls);
        assert_eq!(t.hosts, [hp("cache.example.com", 6380)]);
        assert_eq!(t.user.as_deref(), Some("app"));
        assert_eq!(t.password.as_ref().map(Secret::expose), Some("p@ss:w"));
        assert_eq!(t.db, 2);
        assert_eq!(t.redacted(), "rediss://app:***@cache.example.com:6380/2");
        assert!(!format!("{t:?}").contains("p@ss"));
    }

    #[test]
    fn aerospike_urls_name_seeds_and_a_namespace() {
        let t =
            TargetUrl::parse("aerospike://ops:s3cret@10.0.0.1,10.0.0.2:3100/bench").expect("ok");
        assert_eq!(
            (t.family, t.shape),
            (Some(Family::Aerospike), Shape::Cluster)
        );
        assert_eq!(t.hosts, [hp("10.0.0.1", 3000), hp("10.0.0.2", 3100)]);
        assert_eq!(t.namespace.as_deref(), Some("bench"));
        assert_eq!(t.db, 0);
        assert_eq!(t.password.as_ref().map(Secret::expose), Some("s3cret"));
        assert_eq!(
            t.redacted(),
            "aerospike://ops:***@10.0.0.1:3000,10.0.0.2:3100/bench"
        );
        assert!(!format!("{t:?}").contains("s3cret"));
        let t = TargetUrl::parse("aerospike://127.0.0.1:3000").expect("ok");
        assert_eq!(
            (t.shape, t.namespace.as_deref()),
            (Shape::Single, Some("ycsb"))
        );
        assert_eq!(t.redacted(), "aerospike://127.0.0.1:3000/ycsb");
        let e = TargetUrl::parse("aerospike://h/a b")
            .unwrap_err()
            .to_string();
        assert!(e.contains("namespace 'a b'"), "{e}");
    }

    #[test]
    fn shapes_ports_and_aliases() {
        let t = TargetUrl::parse("redis-cluster://10.0.0.1:7000,10.0.0.2").expect("ok");
        assert_eq!(t.shape, Shape::Cluster);
        assert_eq!(t.hosts, [hp("10.0.0.1", 7000), hp("10.0.0.2", 6379)]);
        let t = TargetUrl::parse("memcached://a:1,b:2,[::1]:3").expect("ok");
        assert_eq!((t.family, t.shape), (Some(Family::Memcache), Shape::Pool));
        assert_eq!(t.hosts[2], hp("::1", 3));
        assert_eq!(t.redacted(), "memcached://a:1,b:2,[::1]:3");
        let t = TargetUrl::parse("memcached://a").expect("ok");
        assert_eq!((t.shape, t.hosts[0].port), (Shape::Single, 11211));
        let t = TargetUrl::parse("valkey://:secret@h:1").expect("ok");
        assert_eq!(
            (t.user.clone(), t.redacted()),
            (None, "valkey://:***@h:1".into())
        );
        let t = TargetUrl::parse("127.0.0.1:6379").expect("ok");
        assert_eq!((t.family, t.redacted()), (None, "127.0.0.1:6379".into()));
    }

    #[test]
    fn sentinel_urls_name_the_sentinels_the_group_and_a_database() {
        let t = TargetUrl::parse("redis-sentinel://:pw@s1,s2:26380/mymaster/2").expect("ok");
        assert_eq!((t.family, t.shape), (Some(Family::Resp), Shape::Sentinel));
        assert_eq!(t.hosts, [hp("s1", 26379), hp("s2", 26380)]);
        assert_eq!((t.group.as_deref(), t.db), (Some("mymaster"), 2));
        assert_eq!(
            t.redacted(),
            "redis-sentinel://:***@s1:26379,s2:26380/mymaster/2"
        );
        let t = TargetUrl::parse("valkey-sentinel://s1/g").expect("ok");
        assert_eq!(
            (t.shape, t.group.as_deref(), t.db),
            (Shape::Sentinel, Some("g"), 0)
        );
        for bad in [
            "redis-sentinel://s1",
            "redis-sentinel://s1/",
            "redis-sentinel://s1//3",
        ] {
            let e = TargetUrl::parse(bad).expect_err(bad).to_string();
            assert!(e.contains("needs the group's name"), "{bad}: {e}");
        }
    }

    #[test]
    fn mistakes_are_named_and_never_quote_the_password() {
        for (url, needle) in [
            ("http://h:1", "unknown scheme 'http://'"),
            ("redis://h:1,h:2", "redis-cluster://"),
            ("rediss://h:1,h:2", "rediss-cluster://"),
            ("redis://h:99999", "'99999' is not a port"),
            ("redis://h:1/x", "database '/x'"),
            ("redis-cluster://h:1/3", "has no databases"),
            ("memcached://u:pw@h:1", "no authentication"),
            ("redis://h:1?tls=1", "query"),
            ("h", "has no port"),
            ("redis://", "no host"),
            ("redis://u:%zz@h:1", "password has a bad %-escape"),
        ] {
            let e = TargetUrl::parse(url).expect_err(url).to_string();
            assert!(e.contains(needle), "{url}: {e}");
            assert!(!e.contains("pw") && !e.contains("%zz"), "{url}: {e}");
        }
    }
}
