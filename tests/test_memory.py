# maxmemory and eviction policies, MEMORY USAGE / STATS, INFO memory fields.
# The same assertions hold for redis-server (TEST_SERVER=redis): limits are
# set relative to the server's own used_memory.
import pytest
import redis

from conftest import HELP_LAST, IS_REDIS


@pytest.fixture
def mm(start_server):
    """A dedicated server (eviction settings must not leak into other tests)."""
    s = start_server()
    c = s.client(protocol=2)
    yield c
    c.close()


def info(c, section):
    return c.info(section)


def fill(c, prefix, n, size, ex=None, start=0):
    pipe = c.pipeline(transaction=False)
    for i in range(start, start + n):
        if ex:
            pipe.set(f"{prefix}:{i}", b"v" * size, ex=ex)
        else:
            pipe.set(f"{prefix}:{i}", b"v" * size)
        if len(pipe) >= 500:
            pipe.execute(raise_on_error=False)
    pipe.execute(raise_on_error=False)


def limit_above_current(c, extra):
    used = info(c, "memory")["used_memory"]
    c.config_set("maxmemory", used + extra)
    return used + extra


def test_noeviction_refuses_writes_but_not_reads_or_deletes(mm):
    mm.set("keep", "1")
    mm.config_set("maxmemory", 1)
    # redis-py strips the "OOM " code into the exception class.
    with pytest.raises(redis.exceptions.OutOfMemoryError,
                       match=r"^command not allowed when used memory > 'maxmemory'\.$"):
        mm.set("k", "v")
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        mm.append("keep", "x")
    assert mm.get("keep") == b"1"
    assert mm.delete("keep") == 1
    mm.config_set("maxmemory", 0)
    assert mm.set("k", "v")
    stats = info(mm, "commandstats")
    assert stats["cmdstat_set"]["rejected_calls"] >= 1


def test_allkeys_random_keeps_memory_under_the_limit(mm):
    limit = limit_above_current(mm, 2 * 1024 * 1024)
    mm.config_set("maxmemory-policy", "allkeys-random")
    fill(mm, "k", 60000, 100)
    assert 0 < mm.dbsize() < 60000
    assert info(mm, "stats")["evicted_keys"] > 0
    # maxmemory bounds all but the clients' buffers: the connection's come on top
    # (with several threads a pipeline over many shards waits for replies
    # from other threads while its input piles up in its read buffer).
    mem = info(mm, "memory")
    assert mem["used_memory"] - mem["mem_clients_normal"] <= limit * 1.05


@pytest.mark.parametrize("policy", [
    pytest.param("allkeys-lru", marks=pytest.mark.skipif(
        IS_REDIS, reason="Redis's LRU clock ticks once a second: within one second it cannot tell hot from cold")),
    "allkeys-lfu"])
def test_lru_and_lfu_keep_the_hot_keys(mm, policy):
    limit_above_current(mm, 2 * 1024 * 1024)
    mm.config_set("maxmemory-policy", policy)
    hot = [f"hot:{i}" for i in range(200)]
    for k in hot:
        mm.set(k, b"h" * 100)
    for batch in range(30):
        fill(mm, "cold", 2000, 100, start=batch * 2000)
        pipe = mm.pipeline(transaction=False)
        for k in hot:
            pipe.get(k)
        pipe.execute()
    assert info(mm, "stats")["evicted_keys"] > 0
    surviving_hot = sum(mm.exists(k) for k in hot)
    cold_total = 30 * 2000
    cold_left = mm.dbsize() - surviving_hot
    # Hot keys survive far more often than cold ones.
    assert surviving_hot / len(hot) > 2 * (cold_left / cold_total)
    assert surviving_hot >= 150


def test_volatile_ttl_evicts_only_keys_with_a_deadline(mm):
    for i in range(300):
        mm.set(f"persistent:{i}", b"p" * 100)
    limit_above_current(mm, 1024 * 1024)
    mm.config_set("maxmemory-policy", "volatile-ttl")
    fill(mm, "vol", 40000, 100, ex=3600)
    assert info(mm, "stats")["evicted_keys"] > 0
    assert all(mm.exists(f"persistent:{i}") for i in range(300))


@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-random", "volatile-ttl", "volatile-lfu"])
def test_volatile_policies_without_volatile_keys_refuse_writes(mm, policy):
    fill(mm, "p", 2000, 100)
    mm.config_set("maxmemory-policy", policy)
    mm.config_set("maxmemory", 1)
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        mm.set("new", "value")
    assert mm.dbsize() == 2000


def test_maxmemory_config(mm):
    assert mm.config_get("maxmemory") == {"maxmemory": "0"}
    assert mm.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
    mm.config_set("maxmemory", "100mb")
    assert mm.config_get("maxmemory") == {"maxmemory": str(100 * 1024 * 1024)}
    with pytest.raises(redis.ResponseError, match=r"^CONFIG SET failed \(possibly related to argument "
                                                  r"'maxmemory-policy'\) - argument\(s\) must be one of the "
                                                  r"following: volatile-lru, volatile-lfu, volatile-random, "
                                                  r"volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
                                                  r"noeviction$"):
        mm.config_set("maxmemory-policy", "sometimes")
    mem = info(mm, "memory")
    assert mem["maxmemory"] == 100 * 1024 * 1024
    assert mem["maxmemory_policy"] == "noeviction"
    assert mem["used_memory"] > 0


def test_maxmemory_ranges_and_human_sizes(mm):
    # Redis: maxmemory takes all of unsigned 64 bits, maxmemory-samples 1..INT_MAX;
    # sizes print as B/K/M/G/T/P, and in bytes past 1024P.
    for value, human in ((1 << 40, "1.00T"), (1 << 50, "1.00P"), (1 << 60, f"{1 << 60}B"),
                         ((1 << 64) - 1, f"{(1 << 64) - 1}B")):
        mm.config_set("maxmemory", str(value))
        assert mm.config_get("maxmemory") == {"maxmemory": str(value)}
        assert info(mm, "memory")["maxmemory_human"] == human
    with pytest.raises(redis.ResponseError, match="argument must be a memory value"):
        mm.config_set("maxmemory", "-1")
    mm.config_set("maxmemory", "0")
    mm.config_set("maxmemory-samples", "2147483647")
    assert mm.config_get("maxmemory-samples") == {"maxmemory-samples": "2147483647"}
    for bad in ("0", "2147483648"):
        with pytest.raises(redis.ResponseError, match=r"argument must be between 1 and 2147483647 inclusive"):
            mm.config_set("maxmemory-samples", bad)
    if IS_REDIS:
        return  # redis-server 7.0 dies evicting with this many samples (it allocates a pool that size)
    # A huge sample count stays bounded by the keys there are (volatile-ttl).
    mm.config_set("maxmemory-policy", "volatile-ttl")
    fill(mm, "t", 2000, 100, ex=1000)
    limit_above_current(mm, 50_000)
    fill(mm, "u", 2000, 100, ex=1000)
    assert info(mm, "stats")["evicted_keys"] > 0
    mm.config_set("maxmemory", "0")


def test_memory_usage(mm):
    mm.set("small", "v")
    mm.set("big", b"x" * 10000)
    assert mm.execute_command("MEMORY", "USAGE", "missing") is None
    small = mm.execute_command("MEMORY", "USAGE", "small")
    big = mm.execute_command("MEMORY", "USAGE", "big")
    assert 0 < small < 200
    assert 10000 <= big < 12000
    assert mm.execute_command("MEMORY", "USAGE", "big", "SAMPLES", "5") == big
    with pytest.raises(redis.ResponseError, match=r"^syntax error$"):
        mm.execute_command("MEMORY", "USAGE", "big", "FOO")
    with pytest.raises(redis.ResponseError, match=r"^value is not an integer or out of range$"):
        mm.execute_command("MEMORY", "USAGE", "big", "SAMPLES", "x")
    # A negative count is a syntax error, whether the key exists or not.
    for key in ("big", "missing"):
        with pytest.raises(redis.ResponseError, match=r"^syntax error$"):
            mm.execute_command("MEMORY", "USAGE", key, "SAMPLES", "-1")


MEMORY_STATS_FIELDS = [
    b"peak.allocated", b"total.allocated", b"startup.allocated", b"replication.backlog", b"clients.slaves",
    b"clients.normal", b"cluster.links", b"aof.buffer", b"lua.caches", b"functions.caches",
    b"overhead.total", b"keys.count", b"keys.bytes-per-key", b"dataset.bytes", b"dataset.percentage",
    b"peak.percentage", b"allocator.allocated", b"allocator.active", b"allocator.resident",
    b"allocator-fragmentation.ratio", b"allocator-fragmentation.bytes", b"allocator-rss.ratio",
    b"allocator-rss.bytes", b"rss-overhead.ratio", b"rss-overhead.bytes", b"fragmentation",
    b"fragmentation.bytes"]


def test_memory_stats(mm):
    fill(mm, "k", 100, 10)
    fill(mm, "t", 10, 10, ex=100)
    mm.execute_command("SELECT", 3)
    mm.set("other", "v")
    stats = mm.execute_command("MEMORY", "STATS")
    names = stats[::2]
    d = dict(zip(names, stats[1::2]))
    # Redis 7's fields in its order, with a db.N entry per database holding keys.
    assert [n for n in names if not n.startswith(b"db.")] == MEMORY_STATS_FIELDS
    assert [n for n in names if n.startswith(b"db.")] == [b"db.0", b"db.3"]
    db0 = dict(zip(d[b"db.0"][::2], d[b"db.0"][1::2]))
    assert set(db0) == {b"overhead.hashtable.main", b"overhead.hashtable.expires",
                        b"overhead.hashtable.slot-to-keys"}
    assert db0[b"overhead.hashtable.main"] > 0
    assert db0[b"overhead.hashtable.expires"] > 0
    assert d[b"keys.count"] == 111
    assert d[b"peak.allocated"] >= d[b"total.allocated"] > d[b"startup.allocated"] > 0
    assert d[b"overhead.total"] >= d[b"startup.allocated"] + d[b"clients.normal"]
    assert d[b"dataset.bytes"] == d[b"total.allocated"] - d[b"overhead.total"]
    assert d[b"keys.bytes-per-key"] == (d[b"total.allocated"] - d[b"startup.allocated"]) // 111
    assert 0 < float(d[b"dataset.percentage"]) <= 100
    for zero in (b"replication.backlog", b"clients.slaves", b"cluster.links", b"aof.buffer", b"lua.caches"):
        assert d[zero] == 0
    mem = info(mm, "memory")
    for field in ("used_memory_overhead", "used_memory_startup", "used_memory_dataset", "allocator_allocated",
                  "allocator_active", "allocator_resident"):
        assert mem[field] > 0, field
    assert mem["used_memory_dataset"] + mem["used_memory_overhead"] == mem["used_memory"]


def test_info_memory_peak_and_client_buffers(mm):
    # used_memory_peak is the highest used_memory seen (not the process's
    # peak RSS); client buffers are mem_clients_normal, as Redis names them.
    fill(mm, "k", 20000, 100)
    full = info(mm, "memory")
    assert full["used_memory_peak"] >= full["used_memory"]
    assert full["mem_clients_normal"] >= 0
    mm.flushall()
    emptied = info(mm, "memory")
    assert emptied["used_memory"] < full["used_memory"] - 1_000_000
    assert emptied["used_memory_peak"] >= full["used_memory"]


def test_memory_purge_malloc_stats_and_help(mm):
    fill(mm, "k", 5000, 100)
    mm.flushall()
    assert mm.execute_command("MEMORY", "PURGE") in (b"OK", "OK", True)
    report = mm.execute_command("MEMORY", "MALLOC-STATS")
    # The allocator's report; Redis's text when the binary has no allocator
    # with one (the sanitizer builds use the sanitizer's allocator).
    assert isinstance(report, bytes)
    assert len(report) > 100 or report == b"Stats not supported for the current allocator"
    for sub in ("PURGE", "MALLOC-STATS"):
        with pytest.raises(redis.ResponseError,
                           match=rf"^wrong number of arguments for 'memory\|{sub.lower()}' command$"):
            mm.execute_command("MEMORY", sub, "extra")
    lines = mm.execute_command("MEMORY", "HELP")
    assert lines == [
        b"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        b"DOCTOR",
        b"    Return memory problems reports.",
        b"MALLOC-STATS",
        b"    Return internal statistics report from the memory allocator.",
        b"PURGE",
        b"    Attempt to purge dirty pages for reclamation by the allocator.",
        b"STATS",
        b"    Return information about the memory usage of the server.",
        b"USAGE <key> [SAMPLES <count>]",
        b"    Return memory in bytes used by <key> and its value. Nested values are",
        b"    sampled up to <count> times (default: 5, 0 means sample all).",
        b"HELP",
        HELP_LAST,
    ]


def test_used_memory_is_what_the_process_allocated(mm):
    # used_memory as Redis means it: not only the keyspace. An idle server
    # has allocated something (its tables, its clients), counted as
    # overhead; once 20 MB of values are in, RSS and used_memory agree
    # within what the allocator keeps (mem_fragmentation_ratio near 1, not
    # the hundreds a keyspace-only figure gave).
    idle = info(mm, "memory")
    if not IS_REDIS and idle["mem_allocator"] != "mimalloc":
        pytest.skip("the heap is counted with the allocator the server ships; a sanitized build uses libc's "
                    "and leaves new and delete to its sanitizer")
    assert idle["used_memory"] >= idle["used_memory_startup"] > 100 * 1024
    assert idle["used_memory_overhead"] <= idle["used_memory"]
    fill(mm, "big", 20000, 1000)
    mem = info(mm, "memory")
    assert mem["used_memory"] >= 20000 * 1000
    assert mem["used_memory_dataset"] >= 20000 * 1000 * 0.9
    assert mem["used_memory"] == mem["used_memory_overhead"] + mem["used_memory_dataset"]
    # (Redis 7.0 reads about 2 here: its RSS keeps freed query buffers.)
    assert 0.7 <= mem["mem_fragmentation_ratio"] <= 2.5


def test_memory_section_has_redis_fields(mm):
    # Every field of Redis 7.2's memory section (some 0 where Peregrine has
    # no such thing: active defrag, cluster links' buffers), and the ratios
    # agree with the bytes they are made of.
    mem = info(mm, "memory")
    for name in ("used_memory", "used_memory_rss", "used_memory_peak", "used_memory_overhead",
                 "used_memory_startup", "used_memory_dataset", "allocator_allocated", "allocator_active",
                 "allocator_resident", "total_system_memory", "total_system_memory_human", "used_memory_vm_eval",
                 "maxmemory_policy", "allocator_frag_ratio", "allocator_frag_bytes", "allocator_rss_ratio",
                 "allocator_rss_bytes", "rss_overhead_ratio", "rss_overhead_bytes", "mem_fragmentation_ratio",
                 "mem_fragmentation_bytes", "mem_not_counted_for_evict", "mem_replication_backlog",
                 "mem_total_replication_buffers", "mem_clients_slaves", "mem_clients_normal", "mem_cluster_links",
                 "mem_aof_buffer", "mem_allocator", "active_defrag_running", "lazyfree_pending_objects"):
        assert name in mem, name
    assert mem["total_system_memory"] > 0
    # (Read in one INFO: the same moment for both.)
    assert abs(mem["mem_fragmentation_bytes"] - (mem["used_memory_rss"] - mem["used_memory"])) <= 1024 * 1024
    assert mem["mem_clients_slaves"] == 0  # no replica yet


def test_memory_doctor(mm):
    # A report in plain text (RESP2: a bulk string). Redis's words are its
    # own; Peregrine's are too, on the same checks.
    report = mm.execute_command("MEMORY", "DOCTOR")
    assert isinstance(report, (bytes, str)) and len(report) > 20
    if IS_REDIS:
        return
    assert "too little" in report.decode()  # (an empty server)
    fill(mm, "big", 12, 1024 * 1024)
    for i in range(1001):
        mm.script_load("return %d" % i)
    report = mm.execute_command("MEMORY", "DOCTOR").decode()
    assert report.startswith("Memory report (used_memory ")
    assert "* Scripts: 1001 EVAL scripts are cached." in report
    mm.script_flush()
    report = mm.execute_command("MEMORY", "DOCTOR").decode()
    assert "Scripts:" not in report
