# OBJECT ENCODING / REFCOUNT / FREQ / IDLETIME / HELP: the encodings Redis
# reports for strings, and the access data behind FREQ and IDLETIME.
import shutil
import subprocess
import time

import pytest
import redis

from conftest import HELP_LAST, IS_REDIS


@pytest.fixture
def rc(r):
    return r


@pytest.mark.parametrize("value,encoding", [
    (b"123", b"int"),
    (b"-9223372036854775808", b"int"),
    (b"0123", b"embstr"),
    (b"12345678901234567890123", b"embstr"),
    (b"hello", b"embstr"),
    (b"x" * 14, b"embstr"),
    (b"x" * 15, b"embstr"),
    (b"\xff" * 15, b"embstr"),
    (b"\x00" * 15, b"embstr"),
    (b"x" * 16, b"embstr"),
    (b"x" * 44, b"embstr"),
    (b"x" * 45, b"raw"),
    (b"x" * 1000, b"raw"),
])
def test_object_encoding_after_set(rc, value, encoding):
    rc.set("k", value)
    assert rc.execute_command("OBJECT", "ENCODING", "k") == encoding
    assert rc.get("k") == value


def test_object_encoding_follows_writes(rc):
    rc.set("n", "41")
    assert rc.incr("n") == 42
    assert rc.execute_command("OBJECT", "ENCODING", "n") == b"int"
    rc.set("s", "abc")
    rc.append("s", "def")
    assert rc.execute_command("OBJECT", "ENCODING", "s") == b"raw"
    assert rc.get("s") == b"abcdef"
    rc.set("r", "abc")
    rc.setrange("r", 1, "Z")
    assert rc.execute_command("OBJECT", "ENCODING", "r") == b"raw"
    assert rc.get("r") == b"aZc"
    rc.set("i", "10")
    rc.append("i", "5")
    assert rc.get("i") == b"105"
    assert rc.incr("i") == 106
    assert rc.execute_command("OBJECT", "ENCODING", "i") == b"int"


def test_object_missing_key_and_refcount(rc):
    assert rc.execute_command("OBJECT", "ENCODING", "nokey") is None
    assert rc.execute_command("OBJECT", "REFCOUNT", "nokey") is None
    rc.set("k", "some longer string value")
    assert rc.execute_command("OBJECT", "REFCOUNT", "k") == 1


def test_object_refcount_of_small_integers(start_server):
    # Redis shares the integers 0..9999 unless maxmemory is set with an
    # LRU/LFU policy, and reports INT_MAX references for them.
    s = start_server()
    c = s.client()
    for key, value, refs in (("a", "5", 2147483647), ("b", "0", 2147483647), ("c", "9999", 2147483647),
                             ("d", "10000", 1), ("e", "-1", 1), ("f", "05", 1), ("g", "x", 1)):
        c.set(key, value)
        assert c.object("refcount", key) == refs, key
    c.incr("a")
    assert c.object("refcount", "a") == 2147483647
    c.append("n", "7")
    assert c.object("refcount", "n") == 2147483647
    c.config_set("maxmemory-policy", "allkeys-lru")
    c.set("h", "7")
    assert c.object("refcount", "h") == 2147483647, "maxmemory is 0: still shared"
    c.config_set("maxmemory", "100mb")
    c.set("i", "7")
    assert c.object("refcount", "i") == 1
    c.config_set("maxmemory-policy", "volatile-ttl")
    c.set("j", "7")
    assert c.object("refcount", "j") == 2147483647


def test_object_refcount_of_copied_integers(server, rc):
    # COPY duplicates the value (Redis's dupStringObject): a copied small integer
    # is an object of its own, refcount 1, through RENAME, MOVE and another COPY;
    # INCR and SET store a shared integer again.
    rc.set("a", "5")
    assert rc.copy("a", "b")
    assert rc.object("refcount", "a") == 2147483647
    assert rc.object("refcount", "b") == 1
    assert rc.object("encoding", "b") == b"int"
    assert rc.copy("b", "c")
    assert rc.object("refcount", "c") == 1
    rc.rename("c", "d")
    assert rc.object("refcount", "d") == 1
    assert rc.move("d", 1)
    db1 = server.client(protocol=2, db=1)
    assert db1.object("refcount", "d") == 1
    assert db1.incr("d") == 6
    assert db1.object("refcount", "d") == 2147483647
    assert db1.copy("d", "e", destination_db=0)
    db1.close()
    assert rc.object("refcount", "e") == 1
    rc.set("e", "6")
    assert rc.object("refcount", "e") == 2147483647


def test_object_errors(rc):
    with pytest.raises(redis.ResponseError, match=r"^unknown subcommand 'FOO'. Try OBJECT HELP.$"):
        rc.execute_command("OBJECT", "FOO", "k")
    with pytest.raises(redis.ResponseError, match=r"^wrong number of arguments for 'object\|encoding' command$"):
        rc.execute_command("OBJECT", "ENCODING")


def test_object_help_is_redis_text(rc):
    assert rc.execute_command("OBJECT", "HELP") == [
        b"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        b"ENCODING <key>",
        b"    Return the kind of internal representation used in order to store the value",
        b"    associated with a <key>.",
        b"FREQ <key>",
        b"    Return the access frequency index of the <key>. The returned integer is",
        b"    proportional to the logarithm of the recent access frequency of the key.",
        b"IDLETIME <key>",
        b"    Return the idle time of the <key>, that is the approximated number of",
        b"    seconds elapsed since the last access to the key.",
        b"REFCOUNT <key>",
        b"    Return the number of references of the value associated with the specified",
        b"    <key>.",
        b"HELP",
        HELP_LAST,
    ]


def test_fifteen_byte_values_round_trip(rc):
    # 15-byte ASCII values are packed inline, binary ones live on the heap.
    values = [b"abcdefghijklmno", b"\x00" * 15, b"\x7f" * 15, b"\x80" + b"a" * 14,
              b"a" * 14 + b"\xff", bytes(range(100, 115)), b"123456789012345"]
    for i, v in enumerate(values):
        rc.set(f"v{i}", v)
    for i, v in enumerate(values):
        assert rc.get(f"v{i}") == v
        assert rc.strlen(f"v{i}") == 15
        assert rc.getrange(f"v{i}", 3, 5) == v[3:6]
    rc.append("v0", "p")
    assert rc.get("v0") == b"abcdefghijklmnop"
    rc.setrange("v1", 14, "Z")
    assert rc.get("v1") == b"\x00" * 14 + b"Z"
    assert rc.incr("v6") == 123456789012346


IDLE_ERR = (r"^An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
            r"switching between policies at runtime LRU and LFU data will take some time to adjust.$")
FREQ_ERR = (r"^An LFU maxmemory policy is not selected, access frequency not tracked. Please note that "
            r"when switching between policies at runtime LRU and LFU data will take some time to adjust.$")


def test_idletime_counts_seconds_and_resets_on_access(rc):
    rc.set("a", "1")
    rc.set("b", "1")
    assert rc.object("idletime", "a") == 0
    time.sleep(2.2)
    assert 2 <= rc.object("idletime", "a") <= 3
    # Lookups that do not count as access (Redis's LOOKUP_NOTOUCH).
    rc.exists("a")
    rc.type("a")
    rc.ttl("a")
    rc.object("encoding", "a")
    rc.object("idletime", "a")
    rc.scan(0, count=100)
    rc.memory_usage("a")
    assert 2 <= rc.object("idletime", "a") <= 3
    # Accesses: a read, and an overwrite.
    rc.get("a")
    assert rc.object("idletime", "a") == 0
    rc.set("b", "two")  # not a small integer: Redis would store its shared object, idle since start-up
    assert rc.object("idletime", "b") == 0
    assert rc.object("idletime", "nokey") is None


def test_idletime_and_freq_depend_on_the_policy(start_server):
    s = start_server("--maxmemory-policy", "allkeys-lfu")
    c = s.client()
    c.set("k", "v")
    assert c.object("freq", "k") == 5  # Redis's LFU_INIT_VAL
    with pytest.raises(redis.ResponseError, match=IDLE_ERR):
        c.object("idletime", "k")
    # A missing key is nil whatever the policy.
    assert c.object("idletime", "nokey") is None
    assert c.object("freq", "nokey") is None
    c.config_set("maxmemory-policy", "volatile-lru")
    with pytest.raises(redis.ResponseError, match=FREQ_ERR):
        c.object("freq", "k")
    assert c.object("idletime", "k") >= 0
    c.config_set("maxmemory-policy", "volatile-lfu")
    assert 0 <= c.object("freq", "k") <= 255
    if not IS_REDIS:
        # Peregrine resets the bytes to the new meaning in a sweep right after
        # the switch (Redis reads the old bits as a counter).
        time.sleep(0.5)
        assert c.object("freq", "k") == 5
        c.config_set("maxmemory-policy", "allkeys-lru")
        time.sleep(0.5)
        assert c.object("idletime", "k") <= 1  # reset to 0 by the pass, a second may have begun since
    for policy in ("noeviction", "allkeys-random", "volatile-ttl", "allkeys-lru"):
        c.config_set("maxmemory-policy", policy)
        with pytest.raises(redis.ResponseError, match=FREQ_ERR):
            c.object("freq", "k")
    with pytest.raises(redis.ResponseError, match=r"^wrong number of arguments for 'object\|freq' command$"):
        c.execute_command("OBJECT", "FREQ")
    with pytest.raises(redis.ResponseError, match=r"^wrong number of arguments for 'object\|idletime' command$"):
        c.execute_command("OBJECT", "IDLETIME", "a", "b")


def test_freq_counts_accesses_and_travels_with_the_key(start_server):
    # lfu-log-factor 0: every access adds one; lfu-decay-time 0: no decay
    # during the test.
    s = start_server("--maxmemory-policy", "allkeys-lfu", "--lfu-log-factor", "0", "--lfu-decay-time", "0")
    c = s.client()
    c.set("k", "v")
    for _ in range(10):
        c.get("k")
    assert c.object("freq", "k") == 15
    c.exists("k")
    c.object("freq", "k")
    assert c.object("freq", "k") == 15, "EXISTS and OBJECT do not count"
    c.set("k", "w")  # the overwrite's lookup counts; the counter stays with the key
    assert c.object("freq", "k") == 16
    c.incr("n")
    c.incr("n")
    assert c.object("freq", "n") == 6
    c.rename("k", "k2")  # RENAME's lookup counts, and the key keeps its counter
    assert c.object("freq", "k2") == 17
    c.move("k2", 3)
    c3 = s.client(db=3)
    assert c3.object("freq", "k2") == 18
    c3.execute_command("COPY", "k2", "k3")
    assert c3.object("freq", "k3") == 5, "a copy is a new value"
    # The counter stops at 255.
    c.set("hot", "v")
    p = c.pipeline(transaction=False)
    for _ in range(300):
        p.get("hot")
    p.execute()
    assert c.execute_command("OBJECT", "FREQ", "hot") == 255


def test_lfu_config_parameters(rc):
    assert rc.config_get("lfu-*") == {"lfu-log-factor": "10", "lfu-decay-time": "1"}
    for name in ("lfu-log-factor", "lfu-decay-time"):
        for bad in ("-1", "2147483648"):
            with pytest.raises(redis.ResponseError,
                               match=rf"^CONFIG SET failed \(possibly related to argument '{name}'\) - "
                                     r"argument must be between 0 and 2147483647 inclusive$"):
                rc.config_set(name, bad)
        with pytest.raises(redis.ResponseError, match="argument couldn't be parsed into an integer"):
            rc.config_set(name, "abc")
    rc.config_set("lfu-log-factor", "100")
    assert rc.config_get("lfu-log-factor") == {"lfu-log-factor": "100"}
    rc.config_set("lfu-log-factor", "10")


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not installed")
def test_redis_cli_hotkeys(start_server):
    # redis-cli --hotkeys scans the keyspace and asks OBJECT FREQ of each key.
    s = start_server("--maxmemory-policy", "allkeys-lfu", "--lfu-log-factor", "0", "--lfu-decay-time", "0")
    c = s.client()
    for i in range(50):
        c.set(f"cold:{i}", "v")
    c.set("hot:key", "v")
    p = c.pipeline(transaction=False)
    for _ in range(200):
        p.get("hot:key")
    p.execute()
    out = subprocess.run(["redis-cli", "-p", str(s.port), "--hotkeys"], capture_output=True, text=True,
                         timeout=30).stdout
    assert "hot key found with counter: 205\tkeyname: \"hot:key\"" in out, out


def test_append_creating_a_key_encodes_it_as_set_does(rc):
    # Redis runs tryObjectEncoding on the value APPEND stores for a new key.
    rc.execute_command("APPEND", "n", "12")
    assert rc.execute_command("OBJECT", "ENCODING", "n") == b"int"
    rc.execute_command("APPEND", "s", "hello")
    assert rc.execute_command("OBJECT", "ENCODING", "s") == b"embstr"
    # Appending to an existing key makes it raw, as before.
    rc.execute_command("APPEND", "n", "3")
    assert rc.execute_command("OBJECT", "ENCODING", "n") == b"raw"
    assert rc.execute_command("GET", "n") == b"123"
