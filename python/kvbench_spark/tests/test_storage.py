"""Reading the cached RDDs' memory from Spark's REST API, against a fake
API on 127.0.0.1 (no Spark)."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from kvbench_spark.session import cached_memory


class FakeContext:
    def __init__(self, url, app="local-123"):
        self.uiWebUrl = url
        self.applicationId = app


def rdd(i, used, cached=2, parts=2):
    return {"id": i, "numPartitions": parts, "numCachedPartitions": cached, "memoryUsed": used}


@pytest.fixture
def fake_api():
    """A loopback HTTP server answering /api/v1/applications/local-123/storage/rdd
    with whatever the test puts in answer["body"]."""
    answer = {"body": "[]", "paths": []}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            answer["paths"].append(self.path)
            body = answer["body"].encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", answer
    server.shutdown()
    server.server_close()


def test_sums_memory_used_of_the_given_rdds(fake_api):
    url, answer = fake_api
    answer["body"] = json.dumps([rdd(3, 1000), rdd(7, 234), rdd(9, 99999)])
    assert cached_memory(FakeContext(url), [3, 7]) == (1234, None)
    assert answer["paths"][-1] == "/api/v1/applications/local-123/storage/rdd"


def test_partial_cache_gives_the_figure_and_a_note(fake_api):
    url, answer = fake_api
    answer["body"] = json.dumps([rdd(3, 1000, cached=1), rdd(7, 234)])
    used, note = cached_memory(FakeContext(url), [3, 7], wait_s=0.3)
    assert used == 1234
    assert "RDD 3: 1 of 2 partitions" in note


def test_no_rdd_listed(fake_api):
    url, answer = fake_api
    used, note = cached_memory(FakeContext(url), [3], wait_s=0.2)
    assert used is None and "lists none of the cached RDDs [3]" in note


def test_ui_disabled():
    assert cached_memory(FakeContext(None), [1]) == (
        None,
        "the Spark UI is disabled (spark.ui.enabled=false): no REST API to read",
    )


def test_ui_not_on_loopback_is_not_queried():
    used, note = cached_memory(FakeContext("http://192.0.2.1:4040"), [1])
    assert used is None and "not on loopback: not queried" in note


def test_unreachable_ui():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    used, note = cached_memory(FakeContext(f"http://127.0.0.1:{port}"), [1], wait_s=0.2)
    assert used is None and note.startswith(f"could not read http://127.0.0.1:{port}/api/v1/")
