# Sourced by bench/efficiency/instructions, bench/efficiency/flamegraph and
# bench/efficiency/builds, so all measure exactly the same kvbench command:
# efficiency case (c), 50 connections, pipeline 16, one worker, 50/50
# GET/SET of 100-byte values over 100,000 keys.
#
# case_c_setup NAME SYSTEM: with $kvbench set (and $pipeline, 16 unless set:
# 1 is case (b)'s shape), starts a private redis-server
# or memcached in a new temporary $dir (stopped and removed on exit), sets
# $common to the case's kvbench flags against it, and loads the records
# (not measured). NAME prefixes its error lines.
case_c_setup() {
    name=$1 system=$2
    dir=$(mktemp -d)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    case "$system" in
        redis)
            redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
                --dir "$dir" >"$dir/server.log" 2>&1 &
            ;;
        memcached)
            # memcached refuses to run as root unless told which user to be.
            as_root=""
            [ "$(id -u)" = 0 ] && as_root="-u root"
            # shellcheck disable=SC2086
            memcached -l 127.0.0.1 -p "$port" -U 0 -m 1024 $as_root >"$dir/server.log" 2>&1 &
            ;;
        *) echo "$name: --system is redis or memcached" >&2; rm -rf "$dir"; exit 2 ;;
    esac
    server=$!
    trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$dir"' EXIT INT TERM
    common="--system $system --target 127.0.0.1:$port --workload getset --records 100000
    --field-count 1 --field-length 100 --clients 50 --pipeline ${pipeline:-16} --threads 1 --warmup 0s --quiet"
    # The server accepts within a second; the load is not measured.
    tries=0
    # shellcheck disable=SC2086
    until "$kvbench" run $common --operations 1 --db "$dir/load.db" >/dev/null 2>"$dir/load.err"; do
        tries=$((tries + 1))
        if [ "$tries" -ge 20 ]; then
            echo "$name: the load failed: $(tail -1 "$dir/load.err")" >&2
            exit 1
        fi
        sleep 0.25
    done
}
