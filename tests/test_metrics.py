# The Prometheus endpoint (metrics-port, docs/observability.md): a valid
# text exposition of INFO under redis_exporter's names, Peregrine's
# per-worker figures, HTTP errors for bad requests, bounded connections;
# and redis_exporter itself (built from its Go module, tests/exporter/)
# scraping Peregrine as it scrapes redis-server.
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import IS_REDIS, ROOT, ServerProcess, free_port

pytestmark = pytest.mark.skipif(IS_REDIS, reason="metrics-port is Peregrine's")

EXPORTER_SRC = os.path.join(ROOT, "tests", "exporter")
EXPORTER_BIN = os.path.join(ROOT, "build", "redis_exporter", "redis_exporter")


def fetch(port, path="/metrics", timeout=10):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout) as resp:
        return resp.status, resp.headers, resp.read().decode()


def families(text):
    """{name: (type, {frozenset(labels): value})} of an exposition (the
    parser rejects malformed text). A summary's samples keep their suffix."""
    out = {}
    for fam in text_string_to_metric_families(text):
        samples = {}
        for s in fam.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
        out[fam.name] = (fam.type, samples)
    return out


def value(fams, name, **labels):
    """A sample's value (a counter's or a summary's samples are named with
    their suffix, their family without it)."""
    for _, samples in fams.values():
        if (name, frozenset(labels.items())) in samples:
            return samples[(name, frozenset(labels.items()))]
    raise AssertionError("no sample %s%r" % (name, labels))


def raw_request(port, data, timeout=5.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out
            out += chunk


@pytest.fixture
def metrics_server(tmp_path):
    port = free_port()
    s = ServerProcess(("--metrics-port", str(port)), tmp_path=tmp_path)
    s.metrics_port = port
    yield s
    s.stop()


def test_metrics_is_info_under_the_exporters_names(metrics_server):
    r = metrics_server.client()
    for i in range(20):
        r.set("k%d" % i, i)
    r.expire("k0", 100)
    r.get("k1")
    r.select(3)
    r.set("in3", 1)
    r.select(0)
    r.lpush("list", 1)
    with pytest.raises(Exception):
        r.execute_command("INCR", "list")
    status, headers, text = fetch(metrics_server.metrics_port)
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    fams = families(text)
    assert value(fams, "redis_up") == 1
    assert value(fams, "redis_db_keys", db="db0") == 21
    assert value(fams, "redis_db_keys_expiring", db="db0") == 1
    assert value(fams, "redis_db_keys", db="db3") == 1
    # Every database below `databases` (16), empty ones at 0.
    assert value(fams, "redis_db_keys", db="db15") == 0
    assert ("redis_db_keys", frozenset({"db": "db16"}.items())) not in fams["redis_db_keys"][1]
    assert fams["redis_commands_processed"][0] == "counter"
    assert value(fams, "redis_commands_total", cmd="set") == 21
    assert value(fams, "redis_commands_total", cmd="incr") == 1
    assert value(fams, "redis_commands_failed_calls_total", cmd="incr") == 1
    assert value(fams, "redis_errors_total", err="WRONGTYPE") == 1
    assert value(fams, "redis_keyspace_hits_total") >= 1
    assert value(fams, "redis_connected_clients") >= 1
    assert value(fams, "redis_max_clients") == 10000
    assert fams["redis_memory_used_bytes"][0] == "gauge"
    assert value(fams, "redis_memory_used_bytes") > 0
    info = r.info("server")
    labels = dict(next(iter(fams["redis_instance_info"][1]))[1])
    assert labels["run_id"] == info["run_id"] and labels["tcp_port"] == str(metrics_server.port)
    assert labels["role"] == "master" and labels["redis_version"] == info["redis_version"]
    assert abs(value(fams, "redis_start_time_seconds") - (time.time() - info["uptime_in_seconds"])) < 5
    # Peregrine's own: every worker's figures, its keys adding up.
    threads = int(value(fams, "peregrine_threads"))
    assert threads == r.info("peregrine")["threads"]
    keys = {dict(k[1])["worker"]: v for k, v in fams["peregrine_worker_keys"][1].items()}
    assert sorted(keys) == [str(i) for i in range(threads)]
    assert sum(keys.values()) == 22
    commands = fams["peregrine_worker_commands"]
    assert commands[0] == "counter" and len(commands[1]) == threads
    assert fams["peregrine_worker_loop_seconds"][0] == "counter"
    r.close()


def test_latency_summaries_follow_commandstats(metrics_server):
    r = metrics_server.client()
    for _ in range(5):
        r.set("a", 1)
    fams = families(fetch(metrics_server.metrics_port)[2])
    summary = fams["redis_latency_percentiles_usec"]
    assert summary[0] == "summary"
    assert value(fams, "redis_latency_percentiles_usec_count", cmd="set") == 5
    assert ("redis_latency_percentiles_usec", frozenset({"cmd": "set", "quantile": "99.9"}.items())) in summary[1]
    r.close()


def test_http_errors_and_head(metrics_server):
    port = metrics_server.metrics_port
    with pytest.raises(urllib.error.HTTPError) as e:
        fetch(port, "/nothing")
    assert e.value.code == 404
    assert fetch(port, "/")[0] == 200
    assert fetch(port, "/metrics?name[]=redis_up")[0] == 200
    out = raw_request(port, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 405 ") and b"\r\nAllow: GET, HEAD\r\n" in out
    out = raw_request(port, b"HEAD /metrics HTTP/1.1\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200 OK\r\n") and out.endswith(b"\r\n\r\n")
    length = int(out.split(b"Content-Length: ")[1].split(b"\r\n")[0])
    assert length > 1000
    assert raw_request(port, b"GET\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert raw_request(port, b"\x00\xff garbage \r\n\r\n").startswith(b"HTTP/1.1 400 ")
    # A request head past 8 KB: 431, without waiting for its end.
    out = raw_request(port, b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 9000)
    assert out.startswith(b"HTTP/1.1 431 ")
    # The server went on serving throughout.
    assert metrics_server.client().ping()


def test_connections_are_bounded_and_idle_ones_closed(metrics_server):
    port = metrics_server.metrics_port
    # 16 connections that never finish their request...
    idle = [socket.create_connection(("127.0.0.1", port), timeout=20) for _ in range(16)]
    for s in idle:
        s.sendall(b"GET /metrics HTTP/1.1\r\n")
    time.sleep(0.3)
    # ...a 17th is closed at once, and Redis clients are served meanwhile.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as extra:
        try:
            extra.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
            assert extra.recv(100) == b""
        except ConnectionResetError:
            pass  # (closed before the request came: reset)
    assert metrics_server.client().ping()
    # After 10 s without progress the idle ones are closed.
    start = time.monotonic()
    for s in idle:
        assert s.recv(100) == b""
        s.close()
    assert 8 < time.monotonic() - start < 15
    assert fetch(port)[0] == 200


def test_metrics_port_is_off_by_default_and_set_at_start(r):
    assert r.config_get("metrics-port") == {"metrics-port": "0"}
    with pytest.raises(Exception, match="can't set immutable config"):
        r.config_set("metrics-port", 9999)


def test_metrics_port_in_use_stops_the_start(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(RuntimeError, match="metrics-port"):
            ServerProcess(("--metrics-port", str(taken.getsockname()[1])), tmp_path=tmp_path)


# ------------------------------------------------------------ redis_exporter

def _go():
    path = shutil.which("go")
    if path is None and os.access("/usr/local/go/bin/go", os.X_OK):
        path = "/usr/local/go/bin/go"
    return path


@pytest.fixture(scope="module")
def exporter_bin():
    """redis_exporter built from tests/exporter/'s module (once; again when
    its go.mod or go.sum changes); skipped where it cannot be built."""
    sources = [os.path.join(EXPORTER_SRC, f) for f in ("go.mod", "go.sum", "tools.go")]
    if os.path.exists(EXPORTER_BIN) and os.path.getmtime(EXPORTER_BIN) >= max(map(os.path.getmtime, sources)):
        return EXPORTER_BIN
    go = _go()
    if go is None:
        pytest.skip("Go is not installed: redis_exporter cannot be built")
    os.makedirs(os.path.dirname(EXPORTER_BIN), exist_ok=True)
    # (Built beside, then renamed: test runs side by side may build at once.)
    tmp = "%s.%d" % (EXPORTER_BIN, os.getpid())
    try:
        p = subprocess.run([go, "build", "-mod=readonly", "-o", tmp, "github.com/oliver006/redis_exporter"],
                           cwd=EXPORTER_SRC, capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.skip("building redis_exporter took over 600 s")
    if p.returncode != 0:
        pytest.skip("redis_exporter could not be built:\n" + (p.stdout + p.stderr).decode(errors="replace")[-3000:])
    os.replace(tmp, EXPORTER_BIN)
    return EXPORTER_BIN


def scrape_with_exporter(exporter, redis_port):
    """What redis_exporter exposes for the server on `redis_port`."""
    web = free_port()
    proc = subprocess.Popen([exporter, "-redis.addr", "redis://127.0.0.1:%d" % redis_port,
                             "-web.listen-address", "127.0.0.1:%d" % web, "-redis-only-metrics"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                return families(fetch(web)[2])
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# Families the exporter makes from other commands than INFO (CONFIG GET,
# SLOWLOG, LATENCY) or from itself: not the endpoint's to serve.
NOT_FROM_INFO = ("redis_exporter_", "redis_config_", "redis_slowlog_", "redis_last_slow_execution",
                 "redis_commands_latencies_usec", "redis_target_scrape", "redis_last_key_groups",
                 "redis_latency_spike")


def test_redis_exporter_scrapes_peregrine_as_redis(exporter_bin, metrics_server, tmp_path):
    (tmp_path / "redis").mkdir()
    ref = ServerProcess(kind="redis", tmp_path=tmp_path / "redis")
    try:
        for s in (metrics_server, ref):
            c = s.client()
            c.set("a", 1)
            c.expire("a", 1000)
            c.get("a")
            c.close()
        ours = scrape_with_exporter(exporter_bin, metrics_server.port)
        theirs = scrape_with_exporter(exporter_bin, ref.port)
    finally:
        ref.stop()
    assert value(ours, "redis_up") == 1
    assert value(ours, "redis_exporter_last_scrape_error", err="") == 0
    # Every family it exposes for redis-server (7.0), of the same type.
    missing = {n: t for n, (t, _) in theirs.items() if ours.get(n, (None,))[0] != t}
    assert not missing, missing
    # What it derives from INFO, the endpoint serves itself: the same
    # families, types and label names.
    own = families(fetch(metrics_server.metrics_port)[2])
    for name, (kind, samples) in ours.items():
        if name.startswith(NOT_FROM_INFO):
            continue
        assert name in own and own[name][0] == kind, name
        label_names = {frozenset(k for k, _ in labels) for (_, labels) in samples}
        own_names = {frozenset(k for k, _ in labels) for (_, labels) in own[name][1]}
        assert label_names <= own_names, name
    assert value(own, "redis_db_keys", db="db0") == value(ours, "redis_db_keys", db="db0") == 1
    assert value(own, "redis_db_keys_expiring", db="db0") == 1
    assert value(own, "redis_max_clients") == value(ours, "redis_max_clients")
    assert own["redis_instance_info"][1].keys() == ours["redis_instance_info"][1].keys()


def test_scrapes_while_every_worker_writes(metrics_server):
    """INFO is made holding every shard, as the INFO command runs: scrapes
    while clients on every worker write (TSan's pass checks for races)."""
    import threading
    stop = threading.Event()
    written = [0]

    def writer(n):
        c = metrics_server.client()
        while not stop.is_set():
            c.set("w%d:%d" % (n, written[0] % 50), 1)
            c.incr("counter")
            written[0] += 1
        c.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    try:
        for _ in range(10):
            fams = families(fetch(metrics_server.metrics_port)[2])
            assert value(fams, "redis_up") == 1
    finally:
        stop.set()
        for t in threads:
            t.join()
    fams = families(fetch(metrics_server.metrics_port)[2])
    assert value(fams, "redis_commands_total", cmd="incrby") == int(metrics_server.client().get("counter"))
