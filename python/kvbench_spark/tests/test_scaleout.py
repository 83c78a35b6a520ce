"""The scale-out channel without Spark: the driver's clock server (offsets,
the start relay, the abort broadcast that stops every worker when one
fails), the local slot count, and bad input refused before Spark starts.
The barrier job itself runs in kvbench's Rust tests (crates/kvbench/tests/
scaleout.rs), against a real Redis and the real kvbench worker."""

import subprocess
import sys
import threading
import time

import pytest

from kvbench_spark import cli, scaleout, scaleout_task


@pytest.fixture
def clock():
    starts = []
    server = scaleout._ClockServer("127.0.0.1", starts.append)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server, starts
    server.shutdown()
    server.server_close()


def test_the_offset_to_a_clock_on_the_same_machine_is_within_its_round_trip(clock):
    server, _ = clock
    offset, rtt = scaleout_task.clock_offset("127.0.0.1", server.server_address[1])
    assert 0 < rtt < 50_000_000
    # The same clock on both ends: the offset is only the reading's error.
    assert abs(offset) <= rtt


def test_the_first_start_is_relayed_once(clock):
    server, starts = clock
    port = server.server_address[1]
    scaleout_task.tell("127.0.0.1", port, "start 123")
    scaleout_task.tell("127.0.0.1", port, "start not-a-number")
    deadline = time.time() + 5
    while not starts and time.time() < deadline:
        time.sleep(0.01)
    assert starts == [123]


def test_a_failed_worker_makes_every_watcher_abort_also_one_that_comes_late(clock):
    server, _ = clock
    port = server.server_address[1]
    early = threading.Event()
    scaleout_task.watch("127.0.0.1", port, early.set)
    time.sleep(0.1)
    assert not early.is_set()
    scaleout_task.tell("127.0.0.1", port, "failed 2 kvbench worker 2/4 was killed by signal 9")
    assert early.wait(5)
    late = threading.Event()
    scaleout_task.watch("127.0.0.1", port, late.set)
    assert late.wait(5)


def test_a_driver_that_is_gone_is_not_an_error_for_tell():
    scaleout_task.tell("127.0.0.1", 1, "start 1")


@pytest.mark.parametrize(
    "master, slots",
    [("local", 1), ("local[4]", 4), ("local[2,3]", 2), ("spark://h:7077", None), ("yarn", None)],
)
def test_local_slots(master, slots):
    assert cli._local_slots(master) == slots


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "kvbench_spark", "scale-out", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_more_workers_than_local_slots_is_refused_before_spark_starts(tmp_path):
    task = tmp_path / "task.json"
    task.write_text("{}")
    p = run_cli("--binary", sys.executable, "--task", task, "--workers", 4, "--master", "local[2]")
    assert p.returncode == 2, p.stderr
    assert "local[2] has 2 task slots, fewer than --workers 4" in p.stderr
    assert p.stdout == ""


def test_a_missing_task_file_is_refused(tmp_path):
    p = run_cli("--binary", sys.executable, "--task", tmp_path / "none.json", "--workers", 1)
    assert p.returncode == 2
    assert "--task" in p.stderr and "no such file" in p.stderr
