# `peregrine --check-rdb FILE` and `peregrine --check-aof [--fix] FILE|MANIFEST`
# (redis-check-rdb and redis-check-aof's jobs) on files written by Debian's
# redis-server and by Peregrine: whole files pass with their keys counted by
# type, damaged ones are reported with the offset, and --fix leaves an AOF
# that both servers load.
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import IS_REDIS, PEREGRINE_BIN, ServerProcess

pytestmark = pytest.mark.skipif(IS_REDIS, reason="Peregrine-only: the binary's check tools")


def tool(*args, stdin=b"", argv0=None):
    exe = argv0 or PEREGRINE_BIN
    p = subprocess.run([exe, *args], input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    return p.returncode, p.stdout.decode(errors="replace")


def fill(c):
    c.set("s", "hello")
    c.set("n", 12345)
    c.rpush("l", *[f"item{i}" for i in range(300)])
    c.sadd("set", *range(10))
    c.hset("h", mapping={f"f{i}": i for i in range(200)})
    c.zadd("z", {"a": 1, "b": 2.5})
    c.xadd("x", {"k": "v"})
    c.set("tmp", "v", ex=1000)


def saved_rdb(tmp_path, kind):
    d = tmp_path / kind
    d.mkdir()
    srv = ServerProcess(["--dir", str(d)], tmp_path=d, kind=kind)
    try:
        c = srv.client()
        fill(c)
        c.save()
    finally:
        srv.stop()
    return d / "dump.rdb"


@pytest.mark.parametrize("kind", ["redis", "peregrine"])
def test_a_whole_rdb_is_ok_and_counted_by_type(tmp_path, kind):
    path = saved_rdb(tmp_path, kind)
    rc, out = tool("--check-rdb", str(path))
    assert rc == 0, out
    assert "Checksum OK" in out
    assert "\\o/ RDB looks OK! \\o/" in out
    assert "[info] 8 keys read" in out
    assert "[info] 1 expires" in out
    assert "[info] keys by type: string 3, list 1, set 1, zset 1, hash 1, stream 1" in out


@pytest.mark.parametrize("kind", ["redis", "peregrine"])
def test_a_damaged_rdb_is_reported_with_its_offset(tmp_path, kind):
    path = saved_rdb(tmp_path, kind)
    data = path.read_bytes()
    cut = tmp_path / "cut.rdb"
    cut.write_bytes(data[:len(data) * 2 // 3])
    rc, out = tool("--check-rdb", str(cut))
    assert rc == 1
    assert out.count("--- RDB ERROR DETECTED ---") == 1  # (once, before the error: redis-check-rdb's)
    # (Where it stopped: EOF, or a compressed string cut short.)
    report = out.split("--- RDB ERROR DETECTED ---")[1]
    assert report.startswith("\n[offset ")
    assert "[additional info] While doing: " in report
    # The byte changed in the middle: a value or the checksum is wrong.
    bad = tmp_path / "bad.rdb"
    bad.write_bytes(data[:len(data) // 2] + bytes([data[len(data) // 2] ^ 0xff]) + data[len(data) // 2 + 1:])
    rc, out = tool("--check-rdb", str(bad))
    assert rc == 1 and "--- RDB ERROR DETECTED ---" in out
    assert "[offset " in out.split("--- RDB ERROR DETECTED ---")[1]


def test_the_tool_by_its_own_name_and_usage_errors(tmp_path):
    path = saved_rdb(tmp_path, "peregrine")
    link = tmp_path / "peregrine-check-rdb"
    os.symlink(PEREGRINE_BIN, link)
    rc, out = tool(str(path), argv0=str(link))
    assert rc == 0 and "RDB looks OK" in out
    assert tool("--check-rdb")[0] == 1
    rc, out = tool("--check-rdb", str(tmp_path / "none.rdb"))
    assert rc == 1 and "No such file or directory" in out
    rc, out = tool("--check-aof", "--fix")
    assert rc == 1 and "Usage" in out


def aof_dir(tmp_path, kind, preamble):
    d = tmp_path / kind
    d.mkdir()
    srv = ServerProcess(["--dir", str(d), "--appendonly", "yes", "--appendfsync", "always",
                         "--aof-use-rdb-preamble", preamble], tmp_path=d, kind=kind)
    try:
        c = srv.client()
        c.set("before", 1)
        c.bgrewriteaof()  # (the base: an RDB or commands)
        for _ in range(100):
            if c.info("persistence")["aof_rewrite_in_progress"] == 0 and \
                    c.info("persistence")["aof_rewrite_scheduled"] == 0:
                break
            time.sleep(0.05)
        for i in range(20):
            c.set(f"k{i}", i)
        p = c.pipeline(transaction=True)
        p.incr("m").incr("m")
        p.execute()
    finally:
        srv.stop()
    return d / "appendonlydir"


@pytest.mark.parametrize("kind,preamble", [("redis", "yes"), ("peregrine", "yes"), ("peregrine", "no")])
def test_an_aof_cut_in_a_multi_is_fixed_to_what_both_servers_load(tmp_path, kind, preamble):
    d = aof_dir(tmp_path, kind, preamble)
    manifest = d / "appendonly.aof.manifest"
    rc, out = tool("--check-aof", str(manifest))
    assert rc == 0, out
    assert "All AOF files and manifest are valid" in out
    incr = sorted(d.glob("*.incr.aof"))[-1]
    size = incr.stat().st_size
    with open(incr, "r+b") as f:
        f.truncate(size - 5)  # inside the EXEC of the MULTI
    rc, out = tool("--check-aof", str(manifest))
    assert rc == 1
    assert "Use the --fix option" in out
    assert f"size={size - 5}" in out
    rc, out = tool("--check-aof", "--fix", str(manifest), stdin=b"n\n")
    assert rc == 1 and "Aborting" in out
    assert incr.stat().st_size == size - 5
    rc, out = tool("--check-aof", "--fix", str(manifest), stdin=b"y\n")
    assert rc == 0, out
    assert "Successfully truncated AOF" in out
    assert tool("--check-aof", str(manifest))[0] == 0
    # Both servers load it: every SET, and the MULTI gone whole.
    for server in ("peregrine", "redis"):
        copy = tmp_path / f"load-{server}"
        shutil.copytree(d.parent, copy)
        srv = ServerProcess(["--dir", str(copy), "--appendonly", "yes"], tmp_path=copy, kind=server)
        try:
            c = srv.client()
            assert c.get("before") == b"1"
            assert c.get("k19") == b"19"
            assert c.get("m") is None
        finally:
            srv.stop()


def test_an_old_style_single_aof_and_a_bad_middle_file(tmp_path):
    d = aof_dir(tmp_path, "peregrine", "no")
    base = sorted(d.glob("*.base.aof"))[-1]
    single = tmp_path / "single.aof"
    single.write_bytes(base.read_bytes())
    rc, out = tool("--check-aof", str(single))
    assert rc == 0 and f"AOF {single} is valid" in out
    single.write_bytes(base.read_bytes() + b"*2\r\n$3\r\nGET\r\n")
    rc, out = tool("--check-aof", "--fix", str(single), stdin=b"y\n")
    assert rc == 0 and single.read_bytes() == base.read_bytes()
    # A base that is cut cannot be fixed by cutting: the files after it
    # would replay on a base missing its end.
    base.write_bytes(base.read_bytes()[:-3])
    rc, out = tool("--check-aof", "--fix", str(d / "appendonly.aof.manifest"), stdin=b"y\n")
    assert rc == 1
    assert "is not the last file: it cannot be fixed by truncating it" in out


# What Peregrine's report adds to redis-check-rdb's: the keys by type, the
# function libraries, the empty values.
OWN_INFO = ("[info] keys by type:", "[info] 1 function libraries", "[info] 0 function libraries")


def same_as_redis(ours_args, redis_tool, redis_args, cwd, stdin=b""):
    """Our tool's report and exit status against Debian's redis-check-* on the same file, run from `cwd`;
    but where Redis reports its own internals ("Internal error in RDB reading offset 0, function at
    rdb.c:2338 -> Stream master ID loading failed ..."), only that both refuse the file."""
    ours = subprocess.run([PEREGRINE_BIN, *ours_args], input=stdin, capture_output=True, timeout=30, cwd=cwd)
    theirs = subprocess.run([redis_tool, *redis_args], input=stdin, capture_output=True, timeout=30, cwd=cwd)
    if b"Internal error in RDB reading" in theirs.stdout:
        assert ours.returncode == theirs.returncode == 1
        return
    mine = [line for line in ours.stdout.decode().splitlines() if not line.startswith(OWN_INFO)]
    # Debian's 7.0 tool names the types up to quicklist-v2 (18) and calls the
    # later ones "unknown"; 7.2's, whose names Peregrine prints, knows them.
    names_72 = {"19": "stream-v2", "20": "set-listpack", "21": "stream-v3"}
    redis_lines = [re.sub(r"Reading type (19|20|21) \(unknown\)", lambda m: f"Reading type {m[1]} ({names_72[m[1]]})",
                          line) for line in theirs.stdout.decode().splitlines()]
    assert mine == redis_lines
    assert ours.returncode == theirs.returncode


@pytest.mark.skipif(shutil.which("redis-check-aof") is None, reason="Debian's redis-check-aof is not installed")
def test_reports_equal_redis_check_aof_and_rdb(tmp_path):
    d = aof_dir(tmp_path, "redis", "yes")
    incr = sorted(d.glob("*.incr.aof"))[-1]
    whole = incr.read_bytes()
    manifest = "appendonly.aof.manifest"
    same_as_redis(["--check-aof", manifest], "redis-check-aof", [manifest], d)
    # Cut inside an argument, at a command's end inside MULTI, garbage after
    # the last command; then --fix told yes, and no.
    for tail in (b"*2\r\n$3\r\nGE", b"hello\r\n"):
        for answer in (b"n\n", b"y\n"):
            for name in ("a.aof", "b.aof"):
                (d / name).write_bytes(whole + tail)
            same_as_redis(["--check-aof", "a.aof"], "redis-check-aof", ["a.aof"], d)
            (d / "a.aof").write_bytes(whole + tail)
            ours = subprocess.run([PEREGRINE_BIN, "--check-aof", "--fix", "a.aof"], input=answer,
                                  capture_output=True, timeout=30, cwd=d)
            theirs = subprocess.run(["redis-check-aof", "--fix", "b.aof"], input=answer, capture_output=True,
                                    timeout=30, cwd=d)
            assert ours.stdout.decode().replace("a.aof", "b.aof") == theirs.stdout.decode()
            assert (d / "a.aof").read_bytes() == (d / "b.aof").read_bytes()
    exec_at = whole.rindex(b"*1\r\n$4\r\nEXEC")
    (d / "c.aof").write_bytes(whole[:exec_at])
    same_as_redis(["--check-aof", "c.aof"], "redis-check-aof", ["c.aof"], d)
    base = sorted(d.glob("*.base.rdb"))[-1].name
    same_as_redis(["--check-rdb", base], "redis-check-rdb", [base], d)
    (tmp_path / "rdb").mkdir()
    rdb = saved_rdb(tmp_path / "rdb", "redis")
    data = rdb.read_bytes()
    same_as_redis(["--check-rdb", "dump.rdb"], "redis-check-rdb", ["dump.rdb"], rdb.parent)
    # Cut anywhere (about 120 places, the header's each byte among them).
    step = max(1, len(data) // 120)
    for n in sorted(set(range(0, 12)) | set(range(0, len(data), step))):
        (rdb.parent / "cut.rdb").write_bytes(data[:n])
        same_as_redis(["--check-rdb", "cut.rdb"], "redis-check-rdb", ["cut.rdb"], rdb.parent)
