# HyperLogLog (issue #21): PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST in
# Redis's exact representation. Random operations are cross-checked with
# Debian's redis-server byte for byte (GET of every HLL after every step),
# and HLLs move between the two servers with GET/SET and DUMP/RESTORE.
import random

import pytest
from redis.backoff import NoBackoff
from redis.retry import Retry

from conftest import IS_REDIS
from helpers import raises, replies

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_HLL = "WRONGTYPE Key is not a valid HyperLogLog string value."
CORRUPT = "INVALIDOBJ Corrupted HLL object detected"


@pytest.fixture
def sparse_max(r):
    """Restores hll-sparse-max-bytes after a test that changes it."""
    yield
    r.config_set("hll-sparse-max-bytes", 3000)


def test_pfadd_and_pfcount(r):
    assert r.pfadd("hll") == 1  # created, even without elements
    assert r.exists("hll") and r.type("hll") == b"string"
    assert r.pfcount("hll") == 0
    assert r.pfadd("hll", "a", "b", "c") == 1
    assert r.pfadd("hll", "a", "b", "c") == 0
    assert r.pfadd("hll", "") == 1  # the empty element counts
    assert r.pfcount("hll") == 4
    assert r.pfadd("hll") == 0
    assert r.pfcount("missing") == 0
    assert not r.exists("missing")
    assert r.object("encoding", "hll") == b"raw"
    r.delete("hll")
    assert r.pfadd("hll", 1, 2, 3, 4, 5) == 1 and r.pfcount("hll") == 5
    assert r.pfadd("hll", 6, 7, 8, 8, 9, 10) == 1 and r.pfcount("hll") == 10


def test_sparse_bytes_and_decode(r):
    r.pfadd("h")
    assert r.get("h") == b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"
    assert r.execute_command("PFDEBUG", "DECODE", "h") == b"Z:16384"
    assert r.execute_command("PFDEBUG", "ENCODING", "h") == b"sparse"
    r.pfadd("h", "a")
    assert r.execute_command("PFDEBUG", "DECODE", "h").count(b"v:") == 1
    assert r.strlen("h") > 18


def test_cache_invalidation(r):
    r.pfadd("hll", "a", "b", "c")
    assert r.getrange("hll", 15, 15) == b"\x80"
    assert r.pfcount("hll") == 3
    assert r.getrange("hll", 15, 15) == b"\x00" and r.getrange("hll", 8, 8) == b"\x03"
    r.pfadd("hll", "a", "b", "c")
    assert r.getrange("hll", 15, 15) == b"\x00"
    r.pfadd("hll", 1, 2, 3)
    assert r.getrange("hll", 15, 15) == b"\x80"


def test_promotion_to_dense(r, sparse_max):
    r.config_set("hll-sparse-max-bytes", 3000)
    assert r.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "3000"}
    rng = random.Random(5)
    n = 0
    while True:
        r.pfadd("hll", *[rng.random() for _ in range(100)])
        n += 100
        card = r.pfcount("hll")
        assert abs(card - n) < card / 100 * 5
        if r.execute_command("PFDEBUG", "ENCODING", "hll") == b"dense":
            break
        assert r.strlen("hll") <= 3000
    assert r.strlen("hll") == 12304
    r.delete("hll")
    r.pfadd("hll", *"abcdedghijk")
    assert r.execute_command("PFDEBUG", "ENCODING", "hll") == b"sparse"
    r.config_set("hll-sparse-max-bytes", 30)
    r.pfadd("hll", "new_element")
    assert r.execute_command("PFDEBUG", "ENCODING", "hll") == b"dense"
    r.config_set("hll-sparse-max-bytes", "1kb")
    assert r.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "1024"}
    with raises("CONFIG SET failed (possibly related to argument 'hll-sparse-max-bytes') - argument must be a memory value"):
        r.config_set("hll-sparse-max-bytes", "x")


def test_dense_and_sparse_agree(r):
    rng = random.Random(9)
    for _ in range(30):
        r.delete("s", "d")
        elements = [rng.random() for _ in range(rng.randrange(1, 150))]
        r.pfadd("d")
        assert r.execute_command("PFDEBUG", "TODENSE", "d") == 1
        assert r.execute_command("PFDEBUG", "TODENSE", "d") == 0
        r.pfadd("s", *elements)
        r.pfadd("d", *elements)
        assert r.execute_command("PFDEBUG", "ENCODING", "s") == b"sparse"
        assert r.execute_command("PFDEBUG", "ENCODING", "d") == b"dense"
        assert r.pfcount("s") == r.pfcount("d")
        assert r.execute_command("PFDEBUG", "GETREG", "s") == r.execute_command("PFDEBUG", "GETREG", "d")


def test_pfdebug(r):
    r.pfadd("hll", 1, 2, 3)
    regs = r.execute_command("PFDEBUG", "GETREG", "hll")
    assert len(regs) == 16384 and sum(1 for v in regs if v) == 3
    assert r.execute_command("PFDEBUG", "ENCODING", "hll") == b"dense"  # GETREG converts
    with raises("HLL encoding is not sparse"):
        r.execute_command("PFDEBUG", "DECODE", "hll")
    with raises("Unknown PFDEBUG subcommand 'nope'"):
        r.execute_command("PFDEBUG", "nope", "hll")
    with raises("The specified key does not exist"):
        r.execute_command("PFDEBUG", "GETREG", "missing")
    with raises("The specified key does not exist"):
        r.execute_command("PFDEBUG", "nope", "missing")
    with raises("wrong number of arguments for 'pfdebug' command"):
        r.execute_command("PFDEBUG", "GETREG")
    r.rpush("l", "x")
    with raises(WRONGTYPE):
        r.execute_command("PFDEBUG", "ENCODING", "l")
    r.set("str", "plain")
    with raises(NOT_HLL):
        r.execute_command("PFDEBUG", "ENCODING", "str")


def test_type_checks(r):
    r.set("foo", "bar")
    r.rpush("list", "a")
    r.set("num", 12345)
    for key in ("foo", "num"):
        with raises(NOT_HLL):
            r.pfadd(key, 1)
        with raises(NOT_HLL):
            r.pfcount(key)
        with raises(NOT_HLL):
            r.pfmerge("dst", key)
        with raises(NOT_HLL):
            r.pfmerge(key, "dst")
    with raises(WRONGTYPE):
        r.pfadd("list", 1)
    with raises(WRONGTYPE):
        r.pfcount("list")
    with raises(WRONGTYPE):
        r.pfcount("missing", "list")
    with raises(WRONGTYPE):
        r.pfmerge("dst", "list")
    assert not r.exists("dst")
    assert r.get("foo") == b"bar"
    for cmd in (("PFADD",), ("PFCOUNT",), ("PFMERGE",), ("PFSELFTEST", "x")):
        with raises(f"wrong number of arguments for '{cmd[0].lower()}' command"):
            r.execute_command(*cmd)


def test_corrupted_hlls_are_detected(r):
    r.pfadd("hll", "a", "b", "c")
    r.append("hll", "hello")  # opcodes past the last register
    with raises(CORRUPT):
        r.pfcount("hll")
    with raises(CORRUPT):
        r.pfcount("hll", "other")
    with raises(CORRUPT):
        r.pfmerge("dst", "hll")
    r.delete("hll")
    r.pfadd("hll", "a", "b", "c")
    r.setrange("hll", 0, "0123")  # broken magic
    with raises(NOT_HLL):
        r.pfcount("hll")
    r.delete("hll")
    r.pfadd("hll", "a", "b", "c")
    r.setrange("hll", 4, "x")  # unknown encoding
    with raises(NOT_HLL):
        r.pfcount("hll")
    r.delete("hll")
    r.pfadd("hll", "a", "b", "c")
    r.setrange("hll", 4, "\x00")  # "dense" of the wrong length
    with raises(NOT_HLL):
        r.pfcount("hll")
    r.set("short", "HYLL")
    with raises(NOT_HLL):
        r.pfadd("short", "x")
    # Nothing but a header: no opcode covers the register.
    r.set("bare", b"HYLL\x01" + b"\x00" * 11)
    with raises(CORRUPT):
        r.pfadd("bare", "x")
    assert r.ping()


def test_random_corruption_never_harms(r):
    """Redis's fuzzing test: random bytes written into HLLs; PFCOUNT and
    PFADD answer (a count or an error) and the server stays up."""
    rng = random.Random(3)
    for _ in range(300):
        r.delete("hll")
        r.pfadd("hll", *[rng.random() for _ in range(rng.randrange(1, 3000))])
        for _ in range(5):
            pos = rng.randrange(r.strlen("hll"))
            r.setrange("hll", pos, bytes([rng.randrange(256)]))
        for cmd in (("PFCOUNT", "hll"), ("PFADD", "hll", "x", "y", "z"), ("PFCOUNT", "hll", "h2"),
                    ("PFMERGE", "h3", "hll")):
            try:
                r.execute_command(*cmd)
            except Exception as e:  # noqa: BLE001
                assert str(e) in (CORRUPT, NOT_HLL), e
    assert r.ping()


def test_pfmerge(r):
    r.pfadd("h1", "a", "b", "c")
    r.pfadd("h2", "b", "c", "d")
    r.pfadd("h3", "c", "d", "e")
    assert r.pfmerge("h", "h1", "h2", "h3")
    assert r.pfcount("h") == 5
    assert r.pfcount("h1", "h2", "h3") == 5
    assert r.pfcount("h1", "missing") == 3
    # Missing sources: an empty destination.
    assert r.pfmerge("dest", "nosrc1", "nosrc2")
    assert r.exists("dest") and r.pfcount("dest") == 0
    assert r.execute_command("PFMERGE", "dest2") is True
    assert r.exists("dest2") and r.pfcount("dest2") == 0
    # The destination is a source too.
    r.pfadd("self", "a", "b", "c")
    assert r.execute_command("PFMERGE", "self") is True
    assert r.pfcount("self") == 3
    assert r.pfmerge("self", "h3")
    assert r.pfcount("self") == 5
    # A dense source makes a dense destination.
    r.pfadd("d", "q")
    r.execute_command("PFDEBUG", "TODENSE", "d")
    r.pfmerge("fromdense", "h1", "d")
    assert r.execute_command("PFDEBUG", "ENCODING", "fromdense") == b"dense"
    assert r.pfcount("fromdense") == 4


def test_union_cardinality(r):
    rng = random.Random(1)
    seen = set()
    for _ in range(3000):
        for j in range(3):
            v = rng.randrange(20000)
            r.pfadd(f"u{j}", v)
            seen.add(v)
    card = r.pfcount("u0", "u1", "u2")
    assert abs(card - len(seen)) < card / 100 * 5


@pytest.mark.skipif(IS_REDIS, reason="keys on distinct shards")
def test_across_shards(server):
    from test_atomicity import keys_on_distinct_shards
    c = server.client()
    c.flushall()
    keys = keys_on_distinct_shards("hll:", 4)
    for i, k in enumerate(keys):
        c.pfadd(k, *[f"{i}-{j}" for j in range(100)])
    assert c.pfcount(*keys) == c.pfcount(keys[0], keys[1], keys[2], keys[3])
    assert abs(c.pfcount(*keys) - 400) < 20
    assert c.pfmerge(keys[0], *keys[1:])
    assert c.pfcount(keys[0]) == c.pfcount(*keys)
    c.close()


def test_pfselftest(server):
    # Redis's self-test is long by design (about a second here, many more
    # under the sanitizers): no timeout of 10 s for it, nor a retry that
    # would queue a second one behind it.
    c = server.client(protocol=2, socket_timeout=300, retry=Retry(NoBackoff(), 0))
    try:
        assert c.execute_command("PFSELFTEST") == b"OK"
    finally:
        c.close()


def test_watch_sees_pfadd_and_cache_update(r):
    r.pfadd("w", "a")
    p = r.pipeline()
    p.watch("w")
    r.pfcount("w")  # updates the cached cardinality: a change of the value
    p.multi()
    p.get("w")
    from redis.exceptions import WatchError
    with pytest.raises(WatchError):
        p.execute()
    p.reset()


@pytest.mark.skipif(IS_REDIS, reason="compares with redis-server")
def test_same_bytes_as_redis(r, reference, sparse_max):
    """Random PFADD / PFMERGE / PFCOUNT / PFDEBUG on both servers: the
    same replies, and every HLL the same bytes after every step."""
    ref = reference.client()
    ref.flushall()
    clients = [r, ref]
    rng = random.Random(20261126)
    keys = [f"h{i}" for i in range(5)]
    for c in clients:
        c.config_set("hll-sparse-max-bytes", 3000)
    for step in range(1500):
        op = rng.random()
        if op < 0.6:
            k = rng.choice(keys)
            n = rng.choice([0, 1, 1, 2, 5, 20, 200])
            elements = [rng.choice([str(rng.randrange(10**6)), rng.randbytes(rng.randrange(0, 40)),
                                    str(rng.random())]) for _ in range(n)]
            cmd = ("PFADD", k, *elements)
        elif op < 0.75:
            cmd = ("PFCOUNT", *rng.sample(keys, rng.randrange(1, 4)))
        elif op < 0.85:
            cmd = ("PFMERGE", *rng.sample(keys, rng.randrange(1, 4)))
        elif op < 0.9:
            cmd = ("PFDEBUG", rng.choice(["DECODE", "ENCODING", "TODENSE"]), rng.choice(keys))
        elif op < 0.95:
            cmd = ("DEL", rng.choice(keys))
        else:
            size = rng.choice([30, 100, 400, 3000])
            cmd = ("CONFIG", "SET", "hll-sparse-max-bytes", str(size))
        got, want = replies(clients, *cmd)
        assert got == want, (step, cmd)
        for k in keys:
            assert r.get(k) == ref.get(k), (step, cmd, k)
    # What Redis wrote, Peregrine reads (and the other way round).
    for k in keys:
        v = ref.get(k)
        if v is None:
            continue
        r.set("from-redis", v)
        assert r.pfcount("from-redis") == ref.pfcount(k)
        dump = ref.dump(k)
        r.restore("restored", 0, dump, replace=True)
        assert r.get("restored") == ref.get(k)
    ref.close()
