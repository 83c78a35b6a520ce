"""The driver of a scale-out phase: starts N gang-scheduled barrier tasks,
each running one slice of the phase's clients through ``kvbench worker``
(``scaleout_task``), and hands their records back to kvbench.

The channel to kvbench is JSON lines on stdout:

- ``{"event": "spark", "master": ..., "spark_version": ..., "startup_s": ...}``
  once the session is up;
- ``{"event": "start", "at_ns": ...}`` when the workers agreed on their start
  (ns since the epoch on this machine's clock, which is kvbench's);
- ``{"event": "done", "workers": [...], "job_s": ...}`` at the end, one record
  per worker: ``part`` (its result) with ``offset_ns`` and ``rtt_ns``, or
  ``error`` (what went wrong, naming the worker).

The driver also serves its clock to the tasks, on ``spark.driver.host`` (the
address the executors already reach it at): a line ``t`` is answered with
``time.time_ns()``; ``start N`` is relayed as the start event; ``watch``
keeps the connection to send ``abort`` on; ``failed I WHY`` sends ``abort``
to every watcher, so one failed worker stops them all at once.
"""

from __future__ import annotations

import json
import os
import socketserver
import threading
import time

from . import scaleout_task


class _ClockHandler(socketserver.StreamRequestHandler):
    def handle(self):
        for raw in self.rfile:
            line = raw.decode("ascii", "replace").strip()
            if line == "t":
                self.wfile.write(f"{time.time_ns()}\n".encode("ascii"))
                self.wfile.flush()
            elif line.startswith("start "):
                try:
                    at = int(line.split()[1])
                except ValueError:
                    continue
                self.server.on_start(at)
            elif line == "watch":
                self.server.add_watcher(self.wfile)
            elif line.startswith("failed "):
                self.server.abort_all()


class _ClockServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, host, on_start):
        super().__init__((host, 0), _ClockHandler)
        self.on_start = on_start
        self._lock = threading.Lock()
        self._watchers = []
        self._aborted = False

    def add_watcher(self, wfile):
        with self._lock:
            self._watchers.append(wfile)
            late = self._aborted
        if late:
            self._send_abort(wfile)

    def abort_all(self):
        with self._lock:
            self._aborted = True
            watchers = list(self._watchers)
        for w in watchers:
            self._send_abort(w)

    @staticmethod
    def _send_abort(wfile):
        try:
            wfile.write(b"abort\n")
            wfile.flush()
        except OSError:
            pass


def run(spark, binary: str, task_json: str, workers: int, emit, lead_ms: int = 2000, ready_timeout_s: float = 120.0):
    """Runs the barrier stage; returns the per-worker records (by worker)."""
    sc = spark.sparkContext
    host = sc.getConf().get("spark.driver.host", "127.0.0.1")
    started = threading.Event()

    def on_start(at):
        if not started.is_set():
            started.set()
            emit({"event": "start", "at_ns": at})

    clock = _ClockServer(host, on_start)
    threading.Thread(target=clock.serve_forever, daemon=True).start()
    try:
        sc.addFile(os.path.abspath(binary))
        fn = scaleout_task.make_task(
            os.path.basename(binary),
            task_json,
            (host, clock.server_address[1]),
            lead_ms * 1_000_000,
            ready_timeout_s,
        )
        rdd = sc.parallelize(range(workers), workers)
        rows = rdd.barrier().mapPartitions(fn).collect()
    finally:
        clock.shutdown()
        clock.server_close()
    records = sorted((json.loads(r) for r in rows), key=lambda r: r["worker"])
    return records
