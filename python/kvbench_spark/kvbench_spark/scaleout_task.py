"""The Spark side of one scale-out worker: a barrier task that runs
``kvbench worker`` on its executor and starts it together with the others.

Each task:

1. measures its clock against the driver's (the best of several round trips
   to the driver's clock server: offset = driver time - the trip's midpoint);
2. starts ``kvbench worker --slice I/N --start-at stdin`` and waits for its
   ``ready`` (every connection open);
3. meets the other tasks in ``allGather``: each brings whether it is ready
   and its clock read as driver time, so all agree on one start instant, a
   lead after the latest of them, on the driver's clock;
4. hands its kvbench that instant on its own clock (minus its offset) and
   waits for its result line, watching the driver: when any worker fails,
   that worker's task tells the driver, the driver tells every task to
   abort, and each closes its kvbench's stdin, which stops that kvbench at
   once (a kvbench worker also stops when its task dies and the pipe closes).

A task never raises for a worker that failed: it returns the failure as its
record, so the driver can name the worker, and it always reaches the
``allGather``, so no task waits for a failed one. This module is pickled by
value: executors need no copy of the package.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import stat
import subprocess
import tempfile
import threading
import time

SAMPLES = 8


def clock_offset(host: str, port: int, samples: int = SAMPLES):
    """(offset_ns, rtt_ns): the driver's clock minus this one's, from the
    round trip with the smallest delay."""
    best = None
    with socket.create_connection((host, port), timeout=10) as s:
        f = s.makefile("rw", buffering=1, encoding="ascii", newline="\n")
        for _ in range(samples):
            t0 = time.time_ns()
            f.write("t\n")
            f.flush()
            line = f.readline()
            t1 = time.time_ns()
            if not line:
                raise OSError("the driver's clock closed the connection")
            server = int(line)
            rtt = t1 - t0
            offset = server - (t0 + t1) // 2
            if best is None or rtt < best[1]:
                best = (offset, rtt)
    return best


def tell(host: str, port: int, line: str) -> None:
    """One line to the driver: ``start NS`` (the start instant on the
    driver's clock, for its window edges) or ``failed I WHY``."""
    try:
        with socket.create_connection((host, port), timeout=10) as s:
            s.sendall(f"{line}\n".encode("utf-8"))
    except OSError:
        pass  # the driver finds out from the records anyway


def watch(host: str, port: int, on_abort) -> socket.socket:
    """A connection on which the driver says ``abort`` when a worker failed."""
    s = socket.create_connection((host, port), timeout=10)
    s.settimeout(None)
    s.sendall(b"watch\n")

    def follow():
        f = s.makefile("r", encoding="utf-8")
        try:
            for line in f:
                if line.startswith("abort"):
                    on_abort()
                    return
        except OSError:
            pass

    threading.Thread(target=follow, daemon=True).start()
    return s


def _reader(stream, out: queue.Queue) -> None:
    for line in iter(stream.readline, ""):
        out.put(line.rstrip("\n"))
    out.put(None)


def _failure(proc, err_path: str, what: str) -> str:
    code = proc.poll()
    tail = ""
    try:
        with open(err_path, encoding="utf-8", errors="replace") as f:
            lines = [l.strip() for l in f.read().splitlines() if l.strip()]
        tail = lines[-1] if lines else ""
    except OSError:
        pass
    if code is not None and code < 0:
        how = f"was killed by signal {-code}"
    elif code is not None:
        how = f"exited with code {code}"
    else:
        how = "did not answer"
    return f"{what} {how}" + (f": {tail}" if tail else "")


def make_task(binary_name: str, task_json: str, clock: tuple, lead_ns: int, ready_timeout_s: float):
    """The mapPartitions function of the barrier stage."""
    host, port = clock

    def run(_rows):
        from pyspark import BarrierTaskContext, SparkFiles

        ctx = BarrierTaskContext.get()
        index = ctx.partitionId()
        count = len(ctx.getTaskInfos())
        me = socket.gethostname()
        record = {"worker": index, "host": me}
        proc = None
        work = tempfile.mkdtemp(prefix="kvbench-worker-")
        err_path = os.path.join(work, "stderr")
        lines: queue.Queue = queue.Queue()
        problem = None
        try:
            offset, rtt = clock_offset(host, port)
            record.update(offset_ns=-offset, rtt_ns=rtt)
            binary = SparkFiles.get(binary_name)
            os.chmod(binary, os.stat(binary).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
            task_path = os.path.join(work, "task.json")
            with open(task_path, "w", encoding="utf-8") as f:
                f.write(task_json)
            with open(err_path, "w", encoding="utf-8") as err:
                proc = subprocess.Popen(
                    [binary, "worker", "--task", task_path, "--slice", f"{index}/{count}", "--start-at", "stdin"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=err,
                    text=True,
                )
            record["pid"] = proc.pid
            threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
            try:
                first = lines.get(timeout=ready_timeout_s)
            except queue.Empty:
                first = None
                problem = f"kvbench worker {index}/{count} on {me} was not ready in {ready_timeout_s:.0f} s"
            if problem is None and first != "ready":
                proc.wait(timeout=10)
                problem = _failure(proc, err_path, f"kvbench worker {index}/{count} on {me}")
        except Exception as e:  # the clock, the binary, the process
            problem = f"worker {index}/{count} on {me} could not start: {e}"

        # Everyone gathers, ready or not, so no task waits for a failed one.
        mine = {"ready": problem is None, "now_ns": time.time_ns() + offset if problem is None else 0}
        gathered = [json.loads(m) for m in ctx.allGather(json.dumps(mine))]
        if problem is None and not all(g["ready"] for g in gathered):
            problem = "another worker failed before the start"
            record["aborted"] = True
        if problem is not None:
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
            record["error"] = problem
            yield json.dumps(record)
            return

        start_driver = max(g["now_ns"] for g in gathered) + lead_ns
        if index == 0:
            tell(host, port, f"start {start_driver}")
        aborted = threading.Event()
        # The abort may come from the watch thread at any time, also before
        # the start instant is written: stdin is closed under this lock only.
        stdin_lock = threading.Lock()

        def close_stdin():
            with stdin_lock:
                try:
                    proc.stdin.close()
                except (OSError, ValueError):
                    pass

        def abort():
            aborted.set()
            close_stdin()

        watcher = None
        try:
            watcher = watch(host, port, abort)
        except OSError:
            pass  # without a watch the worker still ends with its window
        with stdin_lock:
            if not aborted.is_set():
                try:
                    proc.stdin.write(f"{start_driver - offset}\n")
                    proc.stdin.flush()
                except (OSError, ValueError):
                    pass  # it died: its exit says why
        result = None
        while True:
            line = lines.get()
            if line is None:
                break
            result = line
        code = proc.wait()
        if watcher is not None:
            watcher.close()
        if aborted.is_set():
            record["error"] = "stopped because another worker failed"
            record["aborted"] = True
        elif code != 0 or not result:
            record["error"] = _failure(proc, err_path, f"kvbench worker {index}/{count} (pid {proc.pid}) on {me}")
            tell(host, port, f"failed {index} {record['error']}")
        else:
            record["part"] = json.loads(result)
        close_stdin()
        yield json.dumps(record)

    return run
