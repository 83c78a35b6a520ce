//! Eviction policies as users name them (`--eviction`): Redis's and
//! Valkey's eight `maxmemory-policy` values and Memcached's LRU variants.
//! Each system turns a policy into its own command line (see
//! `System::eviction`); this module only names them.

use std::fmt;
use std::str::FromStr;

/// What a server does when a write would take it past its memory limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Eviction {
    /// Refuse the write (Redis `noeviction`, its default; Memcached `-M`).
    NoEviction,
    /// Redis/Valkey: evict any key, least recently used first (sampled).
    AllkeysLru,
    /// Redis/Valkey: evict any key, least frequently used first (sampled).
    AllkeysLfu,
    /// Redis/Valkey: evict any key at random.
    AllkeysRandom,
    /// Redis/Valkey: evict only keys with a TTL, least recently used first.
    VolatileLru,
    /// Redis/Valkey: evict only keys with a TTL, least frequently used first.
    VolatileLfu,
    /// Redis/Valkey: evict only keys with a TTL, at random.
    VolatileRandom,
    /// Redis/Valkey: evict only keys with a TTL, nearest expiry first.
    VolatileTtl,
    /// Memcached: its segmented LRU (hot, warm, cold queues and a
    /// background maintainer; the default since 1.5).
    Lru,
    /// Memcached: the single LRU per slab class of releases before 1.5
    /// (`-o no_lru_maintainer`).
    LruFlat,
}

impl Eviction {
    /// Every policy, in the order help texts list them.
    pub const ALL: [Eviction; 10] = [
        Eviction::NoEviction,
        Eviction::AllkeysLru,
        Eviction::AllkeysLfu,
        Eviction::AllkeysRandom,
        Eviction::VolatileLru,
        Eviction::VolatileLfu,
        Eviction::VolatileRandom,
        Eviction::VolatileTtl,
        Eviction::Lru,
        Eviction::LruFlat,
    ];

    /// The name users write and the record keeps.
    pub fn as_str(self) -> &'static str {
        match self {
            Eviction::NoEviction => "noeviction",
            Eviction::AllkeysLru => "allkeys-lru",
            Eviction::AllkeysLfu => "allkeys-lfu",
            Eviction::AllkeysRandom => "allkeys-random",
            Eviction::VolatileLru => "volatile-lru",
            Eviction::VolatileLfu => "volatile-lfu",
            Eviction::VolatileRandom => "volatile-random",
            Eviction::VolatileTtl => "volatile-ttl",
            Eviction::Lru => "lru",
            Eviction::LruFlat => "lru-flat",
        }
    }

    /// Whether the policy can make room at all: a write past the limit is
    /// refused under `noeviction`, and under a `volatile-*` policy too when
    /// no key has a TTL (kvbench writes none).
    pub fn makes_room(self) -> bool {
        !matches!(
            self,
            Eviction::NoEviction
                | Eviction::VolatileLru
                | Eviction::VolatileLfu
                | Eviction::VolatileRandom
                | Eviction::VolatileTtl
        )
    }
}

impl fmt::Display for Eviction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Eviction {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim().to_ascii_lowercase();
        Eviction::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Eviction::ALL.iter().map(|p| p.as_str()).collect();
                format!(
                    "unknown eviction policy {s:?} (one of {})",
                    names.join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_its_policy() {
        for p in Eviction::ALL {
            assert_eq!(p.as_str().parse::<Eviction>(), Ok(p));
            assert_eq!(p.to_string().to_uppercase().parse::<Eviction>(), Ok(p));
        }
        let e = "lfu".parse::<Eviction>().unwrap_err();
        assert!(e.contains("allkeys-lfu"), "{e}");
    }

    #[test]
    fn only_policies_that_evict_keys_without_a_ttl_make_room() {
        let room: Vec<&str> = Eviction::ALL
            .into_iter()
            .filter(|p| p.makes_room())
            .map(Eviction::as_str)
            .collect();
        assert_eq!(
            room,
            [
                "allkeys-lru",
                "allkeys-lfu",
                "allkeys-random",
                "lru",
                "lru-flat"
            ]
        );
    }
}
