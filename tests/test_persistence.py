# RDB snapshots (issue #20): SAVE and the start-up load round-trip every
# type, TTL, database and function library; files move both ways between
# the server under test and Debian's redis-server; LASTSAVE, INFO
# persistence, save schedules, SHUTDOWN SAVE/NOSAVE, SIGTERM, DEBUG RELOAD,
# stop-writes-on-bgsave-error; corrupt and truncated files are refused at
# start-up with an error, never a crash.
import os
import signal
import subprocess
import time

import pytest
import redis

from conftest import IS_REDIS, PEREGRINE_BIN, ServerProcess, raw_command
from helpers import NO_RETRY, raises
from test_dump import fill, snapshot

LIB = "#!lua name=plib\nredis.register_function('hello', function() return 'hi' end)\n"


def fill_all(c):
    """Every type in db 0, more keys with TTLs in db 3, a function library."""
    fill(c)
    c.execute_command("SELECT", 3)
    c.set("db3:plain", "x")
    c.set("db3:ttl", "y", ex=1000)
    c.hset("db3:h", mapping={"a": 1})
    c.execute_command("SELECT", 0)
    c.execute_command("FUNCTION", "LOAD", "REPLACE", LIB)


def dataset(c):
    """Everything a snapshot should keep: (db, key) -> (type, value, has ttl)."""
    out = {}
    for db in (0, 3):
        c.execute_command("SELECT", db)
        for key in c.keys("*"):
            out[(db, key)] = snapshot(c, key) + (c.pttl(key) > 0,)
    c.execute_command("SELECT", 0)
    return out


_started = []


def assert_loads_as(tmp_path, before, kind=None):
    """A fresh server (of `kind`) started on tmp_path's file holds `before`
    and the function library."""
    s = server_in(tmp_path, kind=kind)
    c = s.client(single_connection_client=True)
    assert dataset(c) == before
    assert c.execute_command("FCALL", "hello", 0) == b"hi"
    s.stop()


def server_in(tmp_path, *args, kind=None):
    s = ServerProcess(args, tmp_path=tmp_path, kind=kind)
    _started.append(s)
    return s


@pytest.fixture(autouse=True)
def _stop_servers():
    """Every server a test started stops when it ends, failed or not."""
    yield
    while _started:
        _started.pop().stop()


def test_save_and_load_round_trip(tmp_path):
    s = server_in(tmp_path)
    c = s.client(single_connection_client=True)
    fill_all(c)
    before = dataset(c)
    assert c.save()
    s.stop()
    assert (tmp_path / "dump.rdb").exists()
    assert_loads_as(tmp_path, before)
    s2 = server_in(tmp_path)
    c2 = s2.client(single_connection_client=True)
    c2.execute_command("SELECT", 3)
    assert 900_000 < c2.pttl("db3:ttl") <= 1_000_000
    s2.stop()


@pytest.mark.skipif(IS_REDIS, reason="compares with redis-server")
def test_redis_files_load_here(tmp_path):
    ref = server_in(tmp_path, kind="redis")
    rc = ref.client(single_connection_client=True)
    fill_all(rc)
    before = dataset(rc)
    rc.save()
    ref.stop()
    assert_loads_as(tmp_path, before)


@pytest.mark.skipif(IS_REDIS, reason="compares with redis-server")
def test_files_saved_here_load_into_redis(tmp_path):
    s = server_in(tmp_path)
    c = s.client(single_connection_client=True)
    fill_all(c)
    before = dataset(c)
    c.save()
    s.stop()
    assert_loads_as(tmp_path, before, kind="redis")


@pytest.mark.parametrize("options", [["--rdbcompression", "no"], ["--rdbchecksum", "no"]])
def test_compression_and_checksum_options(tmp_path, options):
    s = server_in(tmp_path, *options)
    c = s.client()
    c.set("long", "abc" * 1000)
    c.save()
    data = (tmp_path / "dump.rdb").read_bytes()
    if options[1] == "no" and options[0] == "--rdbcompression":
        assert b"abc" * 1000 in data
    else:
        assert data.endswith(b"\0" * 8), "no checksum: eight zero bytes"
    s.stop()
    s2 = server_in(tmp_path)
    assert s2.client().get("long") == b"abc" * 1000
    s2.stop()


def test_lastsave_and_info_persistence(tmp_path):
    s = server_in(tmp_path)
    c = s.client()
    before = c.lastsave()
    info = c.info("persistence")
    assert info["rdb_bgsave_in_progress"] == 0 and info["loading"] == 0
    c.set("a", 1)
    c.incr("a")
    assert c.info("persistence")["rdb_changes_since_last_save"] >= 2
    saves = c.info("persistence").get("rdb_saves", 0)
    time.sleep(1.1)
    c.save()
    info = c.info("persistence")
    assert info["rdb_changes_since_last_save"] == 0
    assert info["rdb_last_bgsave_status"] == "ok"
    assert info["rdb_saves"] == saves + 1
    assert c.lastsave() > before
    s.stop()


def wait_for_file(path, timeout=10):
    deadline = time.time() + timeout
    while not path.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert path.exists(), path


def test_save_schedule_saves_by_itself(tmp_path):
    s = server_in(tmp_path, "--save", "1 1")
    c = s.client()
    assert c.config_get("save")["save"] == "1 1"
    c.set("k", "v")
    wait_for_file(tmp_path / "dump.rdb")
    s.stop()


def test_config_of_snapshots(tmp_path):
    s = server_in(tmp_path)
    c = s.client()
    assert c.config_get("dir")["dir"] == str(tmp_path)
    assert c.config_get("dbfilename")["dbfilename"] == "dump.rdb"
    c.config_set("save", "100 10 20 30")
    assert c.config_get("save")["save"] == "100 10 20 30"
    c.config_set("save", "")
    assert c.config_get("save")["save"] == ""
    with pytest.raises(redis.ResponseError, match="Invalid save parameters"):
        c.config_set("save", "100")
    with pytest.raises(redis.ResponseError, match="can't set protected config"):
        c.config_set("dbfilename", "other.rdb")
    s.stop()


@pytest.mark.skipif(IS_REDIS, reason="Peregrine's process exit")
def test_shutdown_saves_only_when_asked(tmp_path):
    s = server_in(tmp_path)  # no schedule
    c = s.client(retry=NO_RETRY)
    c.set("k", "v")
    c.shutdown(nosave=True)  # (redis-py takes the closed connection for success)
    s.proc.wait(timeout=10)
    assert not (tmp_path / "dump.rdb").exists()
    s = server_in(tmp_path)
    c = s.client(retry=NO_RETRY)
    c.set("k", "v")
    c.shutdown(save=True)
    s.proc.wait(timeout=10)
    assert (tmp_path / "dump.rdb").exists()
    s2 = server_in(tmp_path)
    assert s2.client().get("k") == b"v"
    s2.stop()


@pytest.mark.skipif(IS_REDIS, reason="Peregrine's process exit")
def test_sigterm_saves_when_a_schedule_exists(tmp_path):
    s = server_in(tmp_path, "--save", "3600 1")
    c = s.client()
    c.set("k", "kept")
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(timeout=10) == 0
    s2 = server_in(tmp_path)
    assert s2.client().get("k") == b"kept"
    s2.stop()


def test_debug_reload(tmp_path):
    s = server_in(tmp_path, "--enable-debug-command", "yes")
    c = s.client()
    fill(c)
    before = {k: snapshot(c, k) for k in c.keys("*")}
    assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert {k: snapshot(c, k) for k in c.keys("*")} == before
    c.set("str:short", "changed")
    c.execute_command("DEBUG", "RELOAD", "NOSAVE")
    assert c.get("str:short") == b"hello"
    with pytest.raises(redis.ResponseError, match="DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."):
        c.execute_command("DEBUG", "RELOAD", "BOGUS")
    if not IS_REDIS:  # (Redis exits on the duplicate keys; Peregrine refuses)
        with pytest.raises(redis.ResponseError, match="Error trying to load the RDB dump"):
            c.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH")
    assert c.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE") == b"OK"
    s.stop()


def test_failed_scheduled_save_stops_writes(tmp_path):
    # A directory where the file should go: the rename fails (root may
    # write anywhere, so permissions cannot make it fail).
    (tmp_path / "blocked.rdb").mkdir()
    s = server_in(tmp_path, "--save", "1 1", "--enable-protected-configs", "yes")
    c = s.client()
    c.config_set("dbfilename", "blocked.rdb")
    # A failed SAVE is the command's error only.
    with pytest.raises(redis.ResponseError):
        c.save()
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    c.set("k", "v")
    deadline = time.time() + 10
    while c.info("persistence")["rdb_last_bgsave_status"] == "ok" and time.time() < deadline:
        time.sleep(0.1)
    assert c.info("persistence")["rdb_last_bgsave_status"] == "err"
    with pytest.raises(redis.ResponseError, match="MISCONF"):
        c.set("k", "w")
    with pytest.raises(redis.ResponseError, match="MISCONF"):
        c.ping()
    assert c.get("k") == b"v"
    c.config_set("stop-writes-on-bgsave-error", "no")
    c.set("k", "w")
    c.config_set("stop-writes-on-bgsave-error", "yes")
    c.config_set("dbfilename", "good.rdb")
    assert c.save()
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    c.set("k", "x")
    s.stop()


# ---------------------------------------------------------------- bad files

def start_fails(tmp_path):
    p = subprocess.run([PEREGRINE_BIN, "--port", "0", "--unixsocket", str(tmp_path / "s.sock"), "--save", ""],
                       cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    return p.returncode, p.stdout.decode(errors="replace")


@pytest.mark.skipif(IS_REDIS, reason="Peregrine's start-up")
def test_corrupt_and_truncated_files_are_refused(tmp_path):
    s = server_in(tmp_path)
    c = s.client()
    fill(c)
    c.save()
    s.stop()
    good = (tmp_path / "dump.rdb").read_bytes()
    import random
    rng = random.Random(3)
    cases = [good[:n] for n in (0, 5, 9, 20, len(good) // 2, len(good) - 9, len(good) - 1)]
    for _ in range(12):
        b = bytearray(good)
        b[rng.randrange(9, len(b) - 8)] ^= 1 << rng.randrange(8)
        cases.append(bytes(b))
    cases.append(b"NOTREDIS0010" + good[12:])
    cases.append(b"REDIS0099" + good[9:])
    for data in cases:
        (tmp_path / "dump.rdb").write_bytes(data)
        code, out = start_fails(tmp_path)
        assert code == 1, out
        assert "Fatal error loading the DB" in out, out


@pytest.mark.skipif(IS_REDIS, reason="compares with redis-server")
def test_stream_with_groups_both_ways_with_redis(tmp_path):
    """A stream with deleted entries, consumer groups, consumers and pending
    entries: Redis's file loads here, and what Peregrine saves loads back
    in Redis with the same groups, consumers and pending entries."""
    ref = server_in(tmp_path, kind="redis")
    rc = ref.client()
    for i in range(1, 251):
        rc.xadd("s", {"f": i, "g": "x" * (i % 5)}, id=f"{i}-{i % 2}")
    rc.xdel("s", "7-1", "250-0")
    rc.xgroup_create("s", "g1", id="0")
    rc.xgroup_create("s", "g2", id="100-0")
    rc.xreadgroup("g1", "alice", {"s": ">"}, count=5)
    rc.xreadgroup("g1", "bob", {"s": ">"}, count=3)
    rc.xack("s", "g1", "2-0")
    rc.xgroup_createconsumer("s", "g2", "idle")
    rc.xadd("empty", {"f": "v"}, id="5-0")
    rc.xdel("empty", "5-0")

    entries, length = rc.xrange("s"), rc.xlen("s")
    groups = [(g["name"], g["last-delivered-id"], g["pending"], g["consumers"]) for g in rc.xinfo_groups("s")]
    pending = [(p["message_id"], p["consumer"], p["times_delivered"]) for p in rc.xpending_range("s", "g1", "-", "+", 100)]
    rc.save()
    ref.stop()
    s = server_in(tmp_path)
    c = s.client()
    assert c.xrange("s") == entries and c.xlen("s") == length
    assert c.xlen("empty") == 0 and c.exists("empty")
    with raises("The ID specified in XADD is equal or smaller than the target stream top item"):
        c.xadd("empty", {"f": "v"}, id="5-0")
    c.save()
    s.stop()
    ref2 = server_in(tmp_path, kind="redis")
    rc2 = ref2.client()
    assert rc2.xrange("s") == entries
    assert [(g["name"], g["last-delivered-id"], g["pending"], g["consumers"]) for g in rc2.xinfo_groups("s")] == groups
    assert [(p["message_id"], p["consumer"], p["times_delivered"])
            for p in rc2.xpending_range("s", "g1", "-", "+", 100)] == pending
    assert rc2.xinfo_consumers("s", "g2")[0]["name"] == b"idle"


# ---------------------------------------------------------------- BGSAVE

def wait_bgsave(c, timeout=60):
    deadline = time.time() + timeout
    while c.info("persistence")["rdb_bgsave_in_progress"] and time.time() < deadline:
        time.sleep(0.05)
    assert not c.info("persistence")["rdb_bgsave_in_progress"]


def test_bgsave_round_trip(tmp_path):
    s = server_in(tmp_path)
    c = s.client(single_connection_client=True)
    fill_all(c)
    before = dataset(c)
    saves = c.info("persistence")["rdb_saves"]
    assert c.bgsave() is True
    wait_bgsave(c)
    info = c.info("persistence")
    assert info["rdb_last_bgsave_status"] == "ok"
    assert info["rdb_saves"] == saves + 1
    assert info["rdb_changes_since_last_save"] == 0
    s.stop()
    assert_loads_as(tmp_path, before)


def test_bgsave_says_each_databases_size(tmp_path):
    # RESIZEDB after SELECTDB, with the whole database's keys and keys with
    # a deadline (as Redis writes it; a loader sizes its table once). Each
    # shard's part of the file says the same.
    s = server_in(tmp_path, "--rdbcompression", "no")
    c = s.client(single_connection_client=True)
    for i in range(50):
        c.set(f"k{i}", i, ex=1000 if i < 7 else None)
    c.select(3)
    for i in range(20):
        c.set(f"t{i}", i)
    assert c.bgsave()
    wait_bgsave(c)
    with open(tmp_path / "dump.rdb", "rb") as f:
        data = f.read()
    # (Lengths under 64 are one byte.)
    assert b"\xfe\x00\xfb\x32\x07" in data
    assert b"\xfe\x03\xfb\x14\x00" in data
    body = data[:-8]  # (not the checksum)
    assert body.count(b"\xfe\x00") == body.count(b"\xfe\x00\xfb\x32\x07")


def test_bgsave_is_a_point_in_time_while_writes_go_on(tmp_path):
    # A slow save (rdb-key-save-delay) while every key is rewritten: the
    # file has the values of the moment BGSAVE started, every key once.
    s = server_in(tmp_path, "--rdb-key-save-delay", "20")
    c = s.client()
    n = 20000
    pipe = c.pipeline(transaction=False)
    for i in range(n):
        pipe.set(f"key:{i}", "old")
    pipe.execute()
    c.rpush("list", *range(100))
    assert c.bgsave()
    assert c.info("persistence")["rdb_bgsave_in_progress"] == 1
    with pytest.raises(redis.ResponseError, match="Background save already in progress"):
        c.bgsave()
    with pytest.raises(redis.ResponseError, match="Background save already in progress"):
        c.save()
    pipe = c.pipeline(transaction=False)
    for i in range(n):
        pipe.set(f"key:{i}", "new")
        if i % 3 == 0:
            pipe.delete(f"key:{i}")
        if i % 7 == 0:
            pipe.set(f"extra:{i}", "x")
    pipe.execute()
    c.rpush("list", "later")
    wait_bgsave(c, timeout=120)
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    s.stop()
    s2 = server_in(tmp_path)
    c2 = s2.client()
    assert c2.dbsize() == n + 1
    assert set(c2.mget([f"key:{i}" for i in range(0, n, 97)])) == {b"old"}
    assert c2.llen("list") == 100
    s2.stop()


def test_bgsave_schedule_and_errors(tmp_path):
    s = server_in(tmp_path)
    c = s.client()
    c.set("k", "v")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        c.execute_command("BGSAVE", "NOW")
    out = raw_command(s, b"MULTI\r\nBGSAVE\r\nEXEC\r\n")
    assert b"+Background saving scheduled" in out, out
    wait_for_file(tmp_path / "dump.rdb")
    s.stop()


def test_flushall_and_shutdown_during_bgsave(tmp_path):
    s = server_in(tmp_path, "--rdb-key-save-delay", "100")
    c = s.client(retry=NO_RETRY)
    pipe = c.pipeline(transaction=False)
    for i in range(5000):
        pipe.set(f"k{i}", i)
    pipe.execute()
    assert c.bgsave()
    c.flushall()  # (the BGSAVE's keys as they were still go to its file)
    c.set("after", 1)
    c.shutdown(save=True)  # stops the BGSAVE, saves in the foreground
    s.proc.wait(timeout=30)
    assert not any(p.name.startswith("temp-") for p in tmp_path.iterdir())
    s2 = server_in(tmp_path)
    c2 = s2.client()
    assert c2.keys("*") == [b"after"]
    s2.stop()


def test_bgsave_snapshot_is_atomic_across_shards(tmp_path):
    """Transfers between accounts on different shards (MULTI/EXEC and
    scripts) run while BGSAVEs are taken: every file holds a total that
    is the constant, i.e. each snapshot is one point in time across shards."""
    import threading
    from test_atomicity import keys_on_distinct_shards
    args = ["--rdb-key-save-delay", "20"] + ([] if IS_REDIS else ["--threads", "4"])
    s = server_in(tmp_path, *args)
    c = s.client()
    accounts = keys_on_distinct_shards("acct:", 16)
    for a in accounts:
        c.set(a, 1000)
    # Enough other keys for a save to take a while.
    pipe = c.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(f"filler:{i}", i)
    pipe.execute()
    total = 1000 * len(accounts)
    stop = threading.Event()
    errors = []
    script = "redis.call('DECRBY', KEYS[1], ARGV[1]) redis.call('INCRBY', KEYS[2], ARGV[1]) return 1"

    def transfer(seed):
        import random
        rng = random.Random(seed)
        cc = s.client()
        try:
            while not stop.is_set():
                a, b = rng.sample(accounts, 2)
                if rng.random() < 0.5:
                    p = cc.pipeline(transaction=True)
                    p.decrby(a, 7)
                    p.incrby(b, 7)
                    p.execute()
                else:
                    cc.eval(script, 2, a, b, 3)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=transfer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    files = []
    try:
        for n in range(3):
            time.sleep(0.2)
            assert c.bgsave()
            wait_bgsave(c, timeout=120)
            assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
            dest = tmp_path / f"snap{n}"
            dest.mkdir()
            os.replace(tmp_path / "dump.rdb", dest / "dump.rdb")
            files.append(dest)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    assert not errors, errors
    assert sum(int(v) for v in c.mget(accounts)) == total
    s.stop()
    for d in files:
        s2 = server_in(d)
        c2 = s2.client()
        assert sum(int(v) for v in c2.mget(accounts)) == total, d
        assert c2.dbsize() == len(accounts) + 20000
        s2.stop()


def save_keys(tmp_path, n):
    """k0 .. k<n-1> saved in tmp_path's dump.rdb."""
    s = server_in(tmp_path)
    c = s.client()
    pipe = c.pipeline(transaction=False)
    for i in range(n):
        pipe.set(f"k{i}", i)
    pipe.execute()
    c.save()
    s.stop()


def start_slow_load(tmp_path, *args):
    """A server started on tmp_path's data with key-load-delay 1 ms (and
    `args`), and ask(request) -> the bytes it answers on one connection,
    raw (redis-py retries a LOADING error as a connection error)."""
    import shlex
    import socket
    from conftest import free_port
    port = free_port()
    extra = shlex.split(os.environ.get("PEREGRINE_ARGS", ""))
    proc = subprocess.Popen([PEREGRINE_BIN, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--key-load-delay", "1000", *args] + extra, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT)
    sock = None
    deadline = time.time() + 10
    while sock is None and time.time() < deadline:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            time.sleep(0.01)

    def ask(req):
        sock.sendall(req)
        time.sleep(0.1)
        return sock.recv(65536)
    return proc, port, ask


@pytest.mark.skipif(IS_REDIS, reason="Peregrine's start-up")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_the_start_up_load_exits(tmp_path, sig):
    # (With several workers: the others have not started yet, and the
    # shutdown must not wait for them.)
    save_keys(tmp_path, 3000)
    proc, port, ask = start_slow_load(tmp_path, "--threads", "2")
    try:
        assert ask(b"GET k1\r\n").startswith(b"-LOADING")
        proc.send_signal(sig)
        proc.wait(timeout=5)  # (a 256-key slice, 1 ms a key, at most)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.skipif(IS_REDIS, reason="Peregrine's start-up (redis-server: key-load-delay works the same)")
def test_clients_get_loading_while_the_file_loads(tmp_path):
    save_keys(tmp_path, 3000)
    proc, port, ask = start_slow_load(tmp_path)
    try:
        assert ask(b"GET k1\r\n") == b"-LOADING Redis is loading the dataset in memory\r\n"
        assert ask(b"PING\r\n").startswith(b"-LOADING")
        assert ask(b"NOSUCHCMD\r\n").startswith(b"-ERR unknown command")
        info = ask(b"INFO persistence\r\n")
        assert b"loading:1\r\n" in info and b"loading_loaded_perc:" in info and b"loading_total_bytes:" in info
        # MULTI is allowed while loading; what it queues is refused, so EXEC aborts.
        out = ask(b"MULTI\r\nSET a 1\r\nEXEC\r\n")
        assert out.startswith(b"+OK\r\n-LOADING") and b"-EXECABORT" in out, out
        rc = redis.Redis(port=port, socket_timeout=10)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                rc.ping()
                break
            except redis.BusyLoadingError:
                time.sleep(0.05)
        assert rc.dbsize() == 3000
        assert rc.get("k2999") == b"2999"
        assert rc.info("persistence")["loading"] == 0
        rc.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
