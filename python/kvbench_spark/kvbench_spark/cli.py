"""``python -m kvbench_spark <command>``: pagerank, lookup, generate, scale-out.

stdout carries one summary line and nothing else (the JVM's own output is
sent to stderr); the result is the JSON file (--json-out), the channel
kvbench reads. Exit codes: 0 ok, 1 Spark failed, 2 bad input (one line on
stderr naming the file or flag), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

from .edges import InputError

PROG = "python -m kvbench_spark"

PAGERANK_EXAMPLE = """\
example:
  .venv/bin/python -m kvbench_spark pagerank --edges graph.txt --nodes 10000 \\
      --iterations 10 --damping 0.85 --master 'local[2]' \\
      --ranks-out ranks.bin --json-out result.json

The edge list is SNAP's text format: 'src<TAB>dst' a line (spaces work too),
'#' starts a comment line, node ids 0..N-1 with N = --nodes.
Writes the final ranks (--ranks-out: N little-endian float64, node 0 first)
and the result (--json-out: load_s, iterations_s [{map_s, reduce_s}],
total_s, storage_bytes, jobs, ...); docs/analytics-spark.md has the fields
and the definition of PageRank.
exit codes: 0 ok, 1 Spark failed, 2 bad input, 130 interrupted"""

LOOKUP_EXAMPLE = """\
example:
  .venv/bin/python -m kvbench_spark lookup --edges graph.txt --nodes 10000 \\
      --count 100 --seed 1 --master 'local[2]' --json-out lookup.json

Caches (node, out-degree) for every node as a hash-partitioned pair RDD, then
times --count rdd.lookup(key) calls of random node ids (random.Random(--seed)),
each a Spark job, checking every answer. --json-out gets cache_s, lookup_us,
p50_us, p99_us (nearest rank), ...
exit codes: 0 ok, 1 Spark failed or a wrong answer, 2 bad input, 130 interrupted"""

GENERATE_EXAMPLE = """\
example:
  .venv/bin/python -m kvbench_spark generate --nodes 10000 --edges 50000 \\
      --seed 1 --out graph.txt

Both ends of every edge uniform over 0..N-1 (random.Random(--seed)); duplicate
edges and self-loops are kept. Needs no Spark."""


SCALE_OUT_EXAMPLE = """\
example:
  .venv/bin/python -m kvbench_spark scale-out --binary target/release/kvbench \\
      --task task.json --workers 4 --master 'local[4]'

kvbench run --workers N starts this; it is not meant to be run by hand.
Starts N barrier tasks, each running 'kvbench worker --slice I/N' on its
executor (the binary is shipped with the job), agrees on one start instant and
prints JSON lines on stdout: a 'spark' event, a 'start' event, and 'done' with
one record per worker (docs/scale-out.md).
exit codes: 0 the job ran (a worker's failure is in its record), 1 Spark
failed, 2 bad input, 130 interrupted"""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _conf_pair(text: str):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="The Spark side of kvbench's PageRank analytics workload (paper D).",
        epilog="'%s COMMAND --help' shows each command with an example." % PROG,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def graph_flags(p):
        p.add_argument("--edges", required=True, metavar="FILE", help="edge list (SNAP text; .gz too)")
        p.add_argument("--nodes", required=True, type=int, metavar="N", help="number of nodes; ids 0..N-1")

    def spark_flags(p):
        p.add_argument(
            "--master",
            default="local[2]",
            help="Spark master: local[N] (default local[2]) or a cluster URL such as spark://host:7077",
        )
        p.add_argument(
            "--partitions",
            type=int,
            default=None,
            metavar="P",
            help="partitions of the cached RDDs (default: Spark's default parallelism, 2 for local[2])",
        )
        p.add_argument(
            "--conf",
            action="append",
            type=_conf_pair,
            default=[],
            metavar="KEY=VALUE",
            help="a Spark setting applied after kvbench's own (repeatable), "
            "e.g. spark.driver.memory=4g",
        )

    fmt = argparse.RawDescriptionHelpFormatter
    pr = sub.add_parser(
        "pagerank",
        help="PageRank on Spark RDDs, map and reduce timed per iteration",
        description="PageRank on Spark RDDs with map and reduce timed apart in every iteration.",
        epilog=PAGERANK_EXAMPLE,
        formatter_class=fmt,
    )
    graph_flags(pr)
    pr.add_argument("--iterations", type=int, default=10, help="iterations (default 10; 1 to 1000)")
    pr.add_argument("--damping", type=float, default=0.85, help="damping factor d (default 0.85; 0 to 1)")
    spark_flags(pr)
    pr.add_argument("--ranks-out", metavar="FILE", help="final ranks: N little-endian float64 in node order")
    pr.add_argument("--json-out", required=True, metavar="FILE", help="the result as JSON")

    lk = sub.add_parser(
        "lookup",
        help="timed single-key rdd.lookup calls on a cached pair RDD",
        description="Times single-key lookups (rdd.lookup) on a cached (node, out-degree) pair RDD.",
        epilog=LOOKUP_EXAMPLE,
        formatter_class=fmt,
    )
    graph_flags(lk)
    lk.add_argument("--count", type=int, default=100, help="lookups to time (default 100; 1 to 1000000)")
    lk.add_argument("--seed", type=int, default=0, help="seed of the random node ids (default 0)")
    spark_flags(lk)
    lk.add_argument("--json-out", required=True, metavar="FILE", help="the result as JSON")

    so = sub.add_parser(
        "scale-out",
        help="run one kvbench phase from N Spark barrier tasks",
        description="Runs one kvbench phase from N gang-scheduled Spark barrier tasks.",
        epilog=SCALE_OUT_EXAMPLE,
        formatter_class=fmt,
    )
    so.add_argument("--binary", required=True, metavar="FILE", help="the kvbench binary to ship")
    so.add_argument("--task", required=True, metavar="FILE", help="the phase, as kvbench wrote it")
    so.add_argument("--workers", required=True, type=int, metavar="N", help="barrier tasks (1 to 1024)")
    # Spark's barrier calls return up to a second late (the JVM side polls
    # once a second), so the start must be further ahead than that.
    so.add_argument("--lead-ms", type=int, default=2000, metavar="MS",
                    help="how far after the last worker is ready the start is (default 2000)")
    so.add_argument("--ready-timeout", type=float, default=120.0, metavar="S",
                    help="how long a worker may take to open its connections (default 120)")
    spark_flags(so)

    gen = sub.add_parser(
        "generate",
        help="write a seeded random edge list",
        description="Writes a seeded random directed graph as a SNAP-style edge list.",
        epilog=GENERATE_EXAMPLE,
        formatter_class=fmt,
    )
    gen.add_argument("--nodes", required=True, type=int, metavar="N")
    gen.add_argument("--edges", required=True, type=int, metavar="M")
    gen.add_argument("--seed", type=int, default=0, help="default 0")
    gen.add_argument("--out", required=True, metavar="FILE")
    return parser


def _bounded(flag: str, value, low, high) -> None:
    if not (low <= value <= high):
        raise InputError(f"{flag} must be from {low} to {high}, got {value}")


def _writable(flag: str, path: str) -> None:
    if os.path.isdir(path):
        raise InputError(f"{flag} {path}: is a directory")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InputError(f"{flag} {path}: no such directory {parent}")
    if not os.access(parent, os.W_OK):
        raise InputError(f"{flag} {path}: directory {parent} is not writable")


def _check(args) -> None:
    if args.command in ("pagerank", "lookup", "generate"):
        _bounded("--nodes", args.nodes, 1, 2**31 - 1)
    if args.command == "pagerank":
        _bounded("--iterations", args.iterations, 1, 1000)
        if not math.isfinite(args.damping) or not (0.0 <= args.damping <= 1.0):
            raise InputError(f"--damping must be from 0 to 1, got {args.damping}")
        if args.ranks_out:
            _writable("--ranks-out", args.ranks_out)
    if args.command == "lookup":
        _bounded("--count", args.count, 1, 1_000_000)
    if args.command == "scale-out":
        _bounded("--workers", args.workers, 1, 1024)
        _bounded("--lead-ms", args.lead_ms, 1, 600_000)
        for flag, path in (("--binary", args.binary), ("--task", args.task)):
            if not os.path.isfile(path):
                raise InputError(f"{flag} {path}: no such file")
        slots = _local_slots(args.master)
        if slots is not None and slots < args.workers:
            raise InputError(
                f"--master {args.master} has {slots} task slots, fewer than --workers {args.workers}: "
                "barrier tasks all run at once"
            )
    if args.command in ("pagerank", "lookup", "scale-out"):
        if args.partitions is not None:
            _bounded("--partitions", args.partitions, 1, 100_000)
        # What spark-submit accepts; anything else would fail inside the JVM.
        m = args.master
        if not (m == "yarn" or m.startswith(("local", "spark://", "k8s://"))):
            raise InputError(
                f"--master must be local, local[N], spark://HOST:PORT, k8s://URL or yarn, got {m!r}"
            )
        if args.command != "scale-out":
            _writable("--json-out", args.json_out)
    if args.command == "generate":
        _bounded("--edges", args.edges, 0, 2**31 - 1)
        _writable("--out", args.out)


def _local_slots(master: str):
    """Task slots of a local master (local: 1, local[N], local[N,F]); None
    for a cluster, whose size Spark checks itself."""
    if master == "local":
        return 1
    if master.startswith("local[") and master.endswith("]"):
        inner = master[len("local["):-1].split(",")[0]
        if inner == "*":
            return os.cpu_count() or 1
        try:
            return int(inner)
        except ValueError:
            return None
    return None


def _write_json(path: str, data: dict) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def _one_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    first = text.splitlines()[0].strip()
    return first if len(first) <= 300 else first[:297] + "..."


def _spark_error(e: BaseException) -> str:
    text = _one_line(e)
    if "JAVA_GATEWAY_EXITED" in str(e) or "Java gateway process exited" in str(e):
        return (
            "could not start Spark: its JVM exited before it was ready (its own error, if any, "
            "is above); Spark 4 needs Java 17 or newer (scripts/setup --analytics installs it)"
        )
    return f"Spark failed: {text}"


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    prog = f"{PROG} {args.command}"
    # The JVM inherits file descriptor 1: point it at stderr while Spark
    # runs, so that stdout gets the summary line only.
    real_stdout = os.dup(1)
    sys.stdout.flush()
    os.dup2(2, 1)
    summary = None
    try:
        try:
            _check(args)
            if args.command == "generate":
                summary = _generate(args)
            elif args.command == "scale-out":
                summary = _scale_out(args, real_stdout)
            else:
                summary = _run_spark(args)
        except InputError as e:
            print(f"{prog}: {e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"{prog}: interrupted", file=sys.stderr)
            return 130
        except Exception as e:  # Spark's errors come in many classes
            print(f"{prog}: {_spark_error(e)}", file=sys.stderr)
            return 1
        return 0
    finally:
        sys.stdout.flush()
        os.dup2(real_stdout, 1)
        os.close(real_stdout)
        if summary is not None:
            print(summary, flush=True)


def _generate(args) -> str:
    from . import edges

    pairs = edges.generate(args.nodes, args.edges, args.seed)
    edges.write(
        args.out,
        args.nodes,
        pairs,
        comment=f"kvbench_spark generate --nodes {args.nodes} --edges {args.edges} --seed {args.seed}",
    )
    return f"generate: {args.nodes} nodes, {args.edges} edges (seed {args.seed}) -> {args.out}"


def _scale_out(args, stdout_fd: int) -> None:
    """Events go to the real stdout as they happen (kvbench marks the
    window's edges from the start event); nothing else is printed there."""
    from pyspark import cloudpickle

    from . import scaleout, scaleout_task, session

    out = os.fdopen(os.dup(stdout_fd), "w", buffering=1, encoding="utf-8")

    def emit(event: dict) -> None:
        out.write(json.dumps(event) + "\n")
        out.flush()

    with open(args.task, encoding="utf-8") as f:
        task_json = f.read()
    # A failed worker fails the phase: a barrier stage is never re-run.
    conf = {"spark.task.maxFailures": "1", "spark.stage.maxConsecutiveAttempts": "1"}
    conf.update(dict(args.conf))
    t0 = time.perf_counter()
    spark = session.start(args.master, app_name="kvbench-scale-out", conf=conf)
    startup_s = time.perf_counter() - t0
    cloudpickle.register_pickle_by_value(scaleout_task)
    try:
        emit({"event": "spark", "master": args.master, "spark_version": spark.version, "startup_s": startup_s})
        t1 = time.perf_counter()
        records = scaleout.run(spark, args.binary, task_json, args.workers, emit,
                               lead_ms=args.lead_ms, ready_timeout_s=args.ready_timeout)
        emit({"event": "done", "workers": records, "job_s": time.perf_counter() - t1})
    finally:
        spark.stop()
        out.close()
    return None


def _run_spark(args) -> str:
    from . import edges, session

    # Check the whole file before Spark starts: bad input costs no JVM.
    scan = edges.scan(args.edges, args.nodes, outdeg=args.command == "lookup")
    conf = dict(args.conf)
    t0 = time.perf_counter()
    spark = session.start(args.master, app_name=f"kvbench-{args.command}", conf=conf)
    startup_s = time.perf_counter() - t0
    try:
        if args.command == "pagerank":
            from . import pagerank

            result, ranks = pagerank.run(
                spark,
                args.edges,
                args.nodes,
                scan,
                iterations=args.iterations,
                damping=args.damping,
                partitions=args.partitions,
            )
            result["startup_s"] = startup_s
            if args.ranks_out:
                pagerank.write_ranks(args.ranks_out, ranks)
            _write_json(args.json_out, result)
            maps = [it["map_s"] for it in result["iterations_s"]]
            reduces = [it["reduce_s"] for it in result["iterations_s"]]
            storage = result["storage_bytes"]
            return (
                f"pagerank: spark {result['spark_version']} {result['master']}, "
                f"{result['nodes']} nodes, {result['edges']} edges, {result['iterations']} iterations: "
                f"load {result['load_s']:.3f} s, map {sum(maps) / len(maps):.3f} s and "
                f"reduce {sum(reduces) / len(reduces):.3f} s per iteration, total {result['total_s']:.3f} s, "
                f"storage {'n/a' if storage is None else f'{storage} bytes'}, {result['jobs']} jobs "
                f"-> {args.json_out}"
            )
        from . import lookup

        result = lookup.run(
            spark,
            args.edges,
            args.nodes,
            scan,
            count=args.count,
            seed=args.seed,
            partitions=args.partitions,
        )
        result["startup_s"] = startup_s
        _write_json(args.json_out, result)
        return (
            f"lookup: spark {result['spark_version']} {result['master']}, {result['count']} lookups "
            f"of {result['nodes']} nodes: cache {result['cache_s']:.3f} s, "
            f"p50 {result['p50_us']:.0f} us, p99 {result['p99_us']:.0f} us -> {args.json_out}"
        )
    finally:
        spark.stop()
