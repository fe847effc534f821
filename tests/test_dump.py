# DUMP and RESTORE: every type and encoding round-trips, RESTORE's options
# and errors are Redis's, and payloads move both ways between the server
# under test and Debian's redis-server (values equal, TTLs kept).
import time

import pytest
import redis

from conftest import ServerProcess


def fill(c):
    """One key of every type in each of its encodings (Redis's default limits)."""
    c.set("str:int", 12345)
    c.set("str:short", "hello")
    c.set("str:long", "x" * 300)
    c.set("str:bin", bytes(range(256)) * 3)
    c.rpush("list:small", "a", 1, "b", -70000, "")
    c.rpush("list:big", *[f"item-{i}" for i in range(3000)])
    c.sadd("set:ints", 1, 2, 3, -9223372036854775808, 9223372036854775807)
    c.sadd("set:small", "a", "b", "c")
    c.sadd("set:big", *[f"m{i}" for i in range(1000)])
    c.sadd("set:bigints", *range(600))
    c.zadd("zset:small", {"a": 1, "b": 2.5, "c": float("-inf")})
    c.zadd("zset:big", {f"m{i}": i * 0.5 for i in range(500)})
    c.hset("hash:small", mapping={"f": "v", "n": 12})
    c.hset("hash:big", mapping={f"f{i}": f"v{i}" for i in range(1000)})
    c.hset("hash:longvalue", mapping={"f": "y" * 100})
    c.set("ttl:key", "v", px=500_000)


def snapshot(c, key):
    t = c.type(key).decode()
    if t == "string":
        v = c.get(key)
    elif t == "list":
        v = c.lrange(key, 0, -1)
    elif t == "set":
        v = sorted(c.smembers(key))
    elif t == "zset":
        v = c.zrange(key, 0, -1, withscores=True)
    elif t == "hash":
        v = sorted(c.hgetall(key).items())
    else:
        v = None
    return t, v


KEYS = ["str:int", "str:short", "str:long", "str:bin", "list:small", "list:big", "set:ints", "set:small",
        "set:big", "set:bigints", "zset:small", "zset:big", "hash:small", "hash:big", "hash:longvalue", "ttl:key"]


def test_every_type_round_trips(r):
    fill(r)
    for key in KEYS:
        before = snapshot(r, key)
        encoding = r.object("encoding", key)
        payload = r.dump(key)
        assert payload[-10:-8] == b"\x0a\x00", "RDB version 10: Redis 7.0 loads it"
        r.restore(key + ":copy", 0, payload)
        assert snapshot(r, key + ":copy") == before, key
        assert r.object("encoding", key + ":copy") == encoding, key


def test_dump_missing_key_is_nil(r):
    assert r.dump("nope") is None


def test_restore_ttl_options(r):
    r.set("k", "v")
    payload = r.dump("k")
    r.restore("a", 10_000, payload)
    assert 9_000 < r.pttl("a") <= 10_000
    at = int(time.time() * 1000) + 50_000
    r.restore("b", at, payload, absttl=True)
    assert abs(r.pexpiretime("b") - at) <= 1
    # A deadline already past: OK, and the key is not there (a replaced one goes).
    r.set("c", "old")
    assert r.restore("c", 1, payload, replace=True, absttl=True)
    assert r.exists("c") == 0
    assert r.restore("d", 1, payload, absttl=True)
    assert r.exists("d") == 0


def test_restore_replace_and_busykey(r):
    r.set("k", "v")
    payload = r.dump("k")
    r.rpush("l", "x")
    with pytest.raises(redis.ResponseError, match="Target key name already exists"):
        r.restore("l", 0, payload)
    assert r.restore("l", 0, payload, replace=True)
    assert r.get("l") == b"v"


def test_restore_idletime_and_freq(r):
    r.set("k", "v")
    payload = r.dump("k")
    r.restore("idle", 0, payload, idletime=1000)
    assert 1000 <= r.object("idletime", "idle") <= 1060
    r.config_set("maxmemory-policy", "allkeys-lfu")
    # (Peregrine: the switch resets every key's access byte in the next
    # sweep pass, which starts within a cron tick: let it pass first.)
    time.sleep(0.5)
    try:
        r.restore("hot", 0, payload, frequency=100)
        assert r.object("freq", "hot") == 100
    finally:
        r.config_set("maxmemory-policy", "noeviction")


@pytest.mark.parametrize("args,error", [
    (["k2", "-1", "P"], "Invalid TTL value, must be >= 0"),
    (["k2", "x", "P"], "value is not an integer or out of range"),
    (["k2", "0", "P", "IDLETIME", "-1"], "Invalid IDLETIME value, must be >= 0"),
    (["k2", "0", "P", "FREQ", "256"], "Invalid FREQ value, must be >= 0 and <= 255"),
    (["k2", "0", "P", "FREQ", "1", "IDLETIME", "1"], "syntax error"),
    (["k2", "0", "P", "IDLETIME", "1", "FREQ", "1"], "syntax error"),
    (["k2", "0", "P", "BOGUS"], "syntax error"),
    (["k2", "0", "P", "IDLETIME"], "syntax error"),
])
def test_restore_option_errors(r, args, error):
    r.set("k", "v")
    payload = r.dump("k")
    args = [payload if a == "P" else a for a in args]
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("RESTORE", *args)
    assert r.exists("k2") == 0


def test_bad_payloads_are_refused(r):
    r.rpush("l", *range(100))
    payload = r.dump("l")
    bad_crc = payload[:-1] + bytes([payload[-1] ^ 1])
    newer = payload[:-10] + b"\x63\x00" + payload[-8:]
    for p in (b"", b"short", bad_crc, newer, payload[:5] + payload[-10:]):
        with pytest.raises(redis.ResponseError, match="DUMP payload version or checksum are wrong"):
            r.restore("x", 0, p)
    assert r.exists("x") == 0
    assert r.ping()


def test_wrong_arity(r):
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        r.execute_command("RESTORE", "k", "0")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        r.execute_command("DUMP")


@pytest.fixture(scope="module")
def reference():
    s = ServerProcess(kind="redis")
    yield s
    s.stop()


def test_payloads_from_redis_restore_here(r, reference):
    ref = reference.client()
    ref.flushall()
    fill(ref)
    for key in KEYS:
        r.restore(key, ref.pttl(key) if ref.pttl(key) > 0 else 0, ref.dump(key))
        assert snapshot(r, key) == snapshot(ref, key), key
    assert r.pttl("ttl:key") > 400_000
    ref.close()


def test_payloads_from_here_restore_into_redis(r, reference):
    ref = reference.client()
    ref.flushall()
    fill(r)
    for key in KEYS:
        ref.restore(key, 0, r.dump(key))
        assert snapshot(ref, key) == snapshot(r, key), key
    ref.close()


def _crc64_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x95AC9329AC4BC9B5 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc64_table()


def crc64(data):
    """Redis's CRC-64 (Jones, reflected): to forge payloads whose body reaches the loader."""
    crc = 0
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def test_crc64_reference_value():
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA


def test_corrupted_payloads_never_harm_the_server(r):
    import random
    rng = random.Random(5)
    fill(r)
    payloads = [r.dump(k) for k in KEYS if k not in ("list:big", "set:big", "hash:big")]
    outcomes = set()
    for _ in range(400):
        p = bytearray(rng.choice(payloads)[:-8])
        for _ in range(rng.randint(1, 3)):
            p[rng.randrange(len(p) - 2)] = rng.randrange(256)
        p += crc64(bytes(p)).to_bytes(8, "little")
        try:
            r.restore("fuzz", 0, bytes(p), replace=True)
            outcomes.add("ok")
        except redis.ResponseError as e:
            assert "Bad data format" in str(e) or "DUMP payload version" in str(e), e
            outcomes.add("refused")
    assert outcomes == {"ok", "refused"}
    assert r.ping()
    r.delete("fuzz")
