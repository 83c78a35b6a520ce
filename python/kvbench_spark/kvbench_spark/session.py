"""Starting Spark for kvbench, and reading what it reports about itself.

Everything listens on 127.0.0.1 only:

- ``spark.driver.host`` and ``spark.driver.bindAddress`` = 127.0.0.1 (the
  driver's RPC endpoint and block manager);
- ``SPARK_LOCAL_IP=127.0.0.1`` in the environment the JVM inherits: Spark's
  web UI (and its REST API, which gives the storage figure) binds to
  ``SPARK_LOCAL_IP`` and otherwise to 0.0.0.0, whatever the driver's
  bind address;
- the Py4J gateway between Python and the JVM is on localhost already.

Logging is quiet: a log4j2 configuration of this package
(``log4j2.properties``: WARN, to stderr) replaces Spark's default profile,
``sc.setLogLevel("WARN")`` follows, and the console progress bar is off.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.parse
import urllib.request
from importlib import resources

LOOPBACK = "127.0.0.1"
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


def prepare_environment() -> None:
    """Environment the JVM and the Python workers inherit; call before the
    first SparkContext."""
    os.environ["SPARK_LOCAL_IP"] = LOOPBACK
    # The workers run this interpreter (the venv's) unless told otherwise.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # pyspark refuses to hash-partition in a driver without PYTHONHASHSEED;
    # the keys here are ints, whose hash no seed changes.
    os.environ.setdefault("PYTHONHASHSEED", "0")


def log4j_config() -> str:
    return str(resources.files("kvbench_spark").joinpath("log4j2.properties"))


def start(master: str = "local[2]", app_name: str = "kvbench-spark", conf: dict | None = None):
    """A SparkSession bound to loopback with quiet logging; ``conf`` (e.g.
    from ``--conf KEY=VALUE``) is applied last."""
    prepare_environment()
    from pyspark import cloudpickle
    from pyspark.sql import SparkSession

    from . import tasks

    # The workers get the task functions by value: they need no copy of
    # this package (on a cluster neither).
    cloudpickle.register_pickle_by_value(tasks)
    settings = {
        "spark.driver.host": LOOPBACK,
        "spark.driver.bindAddress": LOOPBACK,
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j_config()}",
    }
    settings.update(conf or {})
    builder = SparkSession.builder.master(master).appName(app_name)
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


class JobCounter:
    """Counts the Spark jobs run between ``start()`` and ``stop()`` on this
    thread, through a job group and the status tracker."""

    _n = 0

    def __init__(self, sc, name: str):
        JobCounter._n += 1
        self.sc = sc
        self.group = f"kvbench-{name}-{os.getpid()}-{JobCounter._n}"

    def start(self) -> None:
        self.sc.setJobGroup(self.group, f"kvbench_spark {self.group}")

    def stop(self, at_least: int = 0, wait_s: float = 2.0) -> int:
        """Jobs in the group; waits up to ``wait_s`` for the status store
        (fed asynchronously by the listener bus) to show ``at_least``."""
        self.sc.setLocalProperty("spark.jobGroup.id", None)
        self.sc.setLocalProperty("spark.job.description", None)
        tracker = self.sc.statusTracker()
        deadline = time.monotonic() + wait_s
        while True:
            ids = tracker.getJobIdsForGroup(self.group)
            if len(ids) >= at_least or time.monotonic() >= deadline:
                return len(ids)
            time.sleep(0.05)


def _opener():
    # No proxy, whatever the environment says: the UI is on loopback.
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def cached_memory(sc, rdd_ids, wait_s: float = 5.0) -> tuple[int | None, str | None]:
    """Memory used by the cached RDDs ``rdd_ids``, summed from the live
    application's monitoring REST API
    (``<ui>/api/v1/applications/<app id>/storage/rdd``, field ``memoryUsed``).

    Returns (bytes, None), or (bytes, note) when not every partition is
    cached, or (None, note saying why) when the API cannot be read. Block
    updates reach the API asynchronously, so this polls (every 0.1 s, up to
    ``wait_s``) until every RDD shows all its partitions cached."""
    url = sc.uiWebUrl
    if not url:
        return None, "the Spark UI is disabled (spark.ui.enabled=false): no REST API to read"
    host = urllib.parse.urlsplit(url).hostname
    if host not in LOOPBACK_HOSTS:
        return None, f"the Spark UI is at {url}, not on loopback: not queried"
    endpoint = f"{url.rstrip('/')}/api/v1/applications/{sc.applicationId}/storage/rdd"
    wanted = set(rdd_ids)
    opener = _opener()
    deadline = time.monotonic() + wait_s
    error = None
    mine: dict = {}
    while True:
        try:
            with opener.open(endpoint, timeout=5) as reply:
                listed = json.load(reply)
            mine = {r["id"]: r for r in listed if r.get("id") in wanted}
            error = None
            if len(mine) == len(wanted) and all(
                r.get("numCachedPartitions") == r.get("numPartitions") for r in mine.values()
            ):
                return sum(int(r.get("memoryUsed", 0)) for r in mine.values()), None
        except (OSError, ValueError, KeyError, TypeError) as e:
            error = f"{type(e).__name__}: {e}"
        if time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    if error is not None:
        return None, f"could not read {endpoint}: {error}"
    if not mine:
        return None, f"{endpoint} lists none of the cached RDDs {sorted(wanted)}"
    parts = ", ".join(
        f"RDD {i}: {r.get('numCachedPartitions')} of {r.get('numPartitions')} partitions"
        for i, r in sorted(mine.items())
    )
    missing = sorted(wanted - set(mine))
    note = f"not all cached ({parts}" + (f"; RDDs {missing} not listed" if missing else "") + ")"
    return sum(int(r.get("memoryUsed", 0)) for r in mine.values()), note
