# A client's pipelined commands take effect in the order it sent them, as
# every other client sees them, though they run on several shards (issue
# #37, docs/transactions.md "Pipelines and reply order"). Many clients at
# once for a few seconds, on 4 and 8 workers (more than this machine has
# cores, so that they interleave); each check is one that running a
# pipeline's commands for different shards side by side, unchecked, fails:
#   - a producer pipelines SET data:<id> then LPUSH queue <id>, many ids in
#     one pipeline over every shard; consumers that pop an id always find
#     its data;
#   - a writer pipelines INCR over counters on different shards, always in
#     the same order; readers pipeline GETs of them in the reverse order
#     (and MGETs, which borrow shards), so what they read must never
#     increase along the counters;
#   - a reader's pipelined GETs of keys a writer changes in order see a
#     state the writer went through: never its second change without its
#     first.
# The writers' pipelines run as write groups (one part per worker at once,
# each in its ticket's order on its shard), the readers' as read groups or
# relays.
import socket
import threading
import time

import pytest

from conftest import IS_REDIS
from helpers import encode
from test_atomicity import DURATION_S, keys_on_distinct_shards, run_for, shard_of


@pytest.fixture(params=[4, 8], ids=["threads4", "threads8"])
def workers(request, start_server):
    n = request.param
    s = start_server() if IS_REDIS else start_server("--threads", str(n))
    return s, n


MAX_PRODUCED = 8000


def test_consumer_that_pops_an_id_finds_its_data(workers):
    server, n = workers
    deadline = time.monotonic() + DURATION_S
    errors, popped, produced = [], [0], [0]
    stop = threading.Event()

    def producer(p):
        c = server.client()
        i = 0
        # (Bounded too: on many workers sharing two cores the consumers
        # drained a run's whole output for half a minute after it.)
        while time.monotonic() < deadline and produced[0] < MAX_PRODUCED:
            pipe = c.pipeline(transaction=False)
            for _ in range(16):
                i += 1
                ident = f"{p}:{i}"
                pipe.set(f"data:{ident}", ident)
                pipe.lpush("queue", ident)
            pipe.execute()
            produced[0] += 16
        stop.set()

    def consumer():
        c = server.client()
        while not (stop.is_set() and c.llen("queue") == 0):
            got = c.brpop("queue", timeout=0.2)
            if got is None:
                continue
            ident = got[1].decode()
            popped[0] += 1
            # Also pipelined, with reads of other shards around it.
            pipe = c.pipeline(transaction=False)
            pipe.get("data:none")
            pipe.get(f"data:{ident}")
            pipe.exists(f"data:{ident}")
            r = pipe.execute()
            if r[1] != ident.encode() or r[2] != 1:
                errors.append(f"popped {ident}, its data read {r[1]!r} / exists {r[2]}")

    run_for([threading.Thread(target=producer, args=(p,)) for p in range(3)] +
            [threading.Thread(target=consumer) for _ in range(4)])
    assert not errors, errors[:5]
    assert popped[0] == produced[0] > 100
    # The data keys were spread over every shard.
    assert len({shard_of(f"data:0:{i}", n) for i in range(1, 200)}) == n


def test_readers_never_see_later_increments_without_earlier(workers):
    server, n = workers
    counters = keys_on_distinct_shards("seq", 6, shards=n)
    assert len({shard_of(k, n) for k in counters}) >= min(n, 4)
    deadline = time.monotonic() + DURATION_S
    errors, reads, writes = [], [0], [0]

    def writer():
        c = server.client()
        while time.monotonic() < deadline:
            pipe = c.pipeline(transaction=False)
            for _ in range(8):
                for k in counters:
                    pipe.incr(k)
            pipe.execute()
            writes[0] += 8

    def reader(use_mget):
        c = server.client()
        backwards = list(reversed(counters))
        while time.monotonic() < deadline:
            pipe = c.pipeline(transaction=False)
            for _ in range(4):
                if use_mget:
                    pipe.mget(backwards)
                else:
                    for k in backwards:
                        pipe.get(k)
            r = pipe.execute()
            flat = [v for x in r for v in (x if isinstance(x, list) else [x])]
            values = [int(v) if v is not None else 0 for v in flat]
            reads[0] += 1
            # Read last counter first: along one read of the chain the values
            # never decrease; and from one read to the next, nothing goes back.
            for j in range(1, len(values)):
                if j % len(counters) != 0 and values[j] < values[j - 1]:
                    errors.append(f"read {values[j - 1]} of {backwards[(j - 1) % len(counters)]} "
                                  f"then {values[j]} of {backwards[j % len(counters)]}")
                    break

    before = server.client().info("peregrine")
    run_for([threading.Thread(target=writer) for _ in range(2)] +
            [threading.Thread(target=reader, args=(m,)) for m in (False, False, False, True)])
    assert not errors, errors[:5]
    assert reads[0] > 20 and writes[0] > 20
    if not IS_REDIS:
        # The readers' pipelines ran as read groups (the writers' as relays).
        after = server.client().info("peregrine")
        assert after["cross_shard_read_groups"] - before["cross_shard_read_groups"] >= reads[0] // 2
    c = server.client()
    assert [int(v) for v in c.mget(counters)] == [writes[0]] * len(counters)


def test_pipelined_reads_see_a_state_the_writer_went_through(workers):
    server, n = workers
    first, second = keys_on_distinct_shards("step", 2, shards=n)
    deadline = time.monotonic() + DURATION_S
    errors, seen = [], set()

    def writer():
        c = server.client()
        i = 0
        while time.monotonic() < deadline:
            i += 1
            # One pipeline: `first` always moves on before `second` does.
            pipe = c.pipeline(transaction=False)
            pipe.set(first, i)
            pipe.set(second, i)
            pipe.execute()

    def reader():
        c = server.client()
        while time.monotonic() < deadline:
            pipe = c.pipeline(transaction=False)
            pipe.get(second)
            pipe.get(first)
            b, a = pipe.execute()
            a, b = int(a or 0), int(b or 0)
            # Read `second` first: `first` was set at least that far.
            if a < b:
                errors.append(f"{second}={b} then {first}={a}")
            seen.add(a - b)

    run_for([threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(4)])
    assert not errors, errors[:5]
    assert seen, "no reads"


def test_a_pipeline_of_reads_runs_as_one_group_with_replies_in_order(workers):
    server, n = workers
    keys = [f"g{i}" for i in range(64)]
    assert len({shard_of(k, n) for k in keys}) == n
    c = server.client()
    c.mset({k: f"v{i}" for i, k in enumerate(keys)})
    before = c.info("peregrine")
    for _ in range(20):
        pipe = c.pipeline(transaction=False)
        for k in keys:
            pipe.get(k)
        pipe.strlen(keys[5])
        pipe.exists(keys[0], keys[1], "missing")  # (over several shards: borrows)
        pipe.get("missing")
        assert pipe.execute() == [f"v{i}".encode() for i in range(64)] + [2, 2, None]
    if not IS_REDIS:
        after = c.info("peregrine")
        # Nothing wrote meanwhile: no group ran again. The EXISTS over
        # several shards ends the first group; what follows it is another.
        assert after["cross_shard_read_groups"] - before["cross_shard_read_groups"] >= 20
        assert after["cross_shard_read_group_reruns"] == before["cross_shard_read_group_reruns"]


def test_a_pipeline_of_writes_runs_as_one_write_group_with_replies_in_order(workers):
    server, n = workers
    keys = [f"w{i}" for i in range(48)]
    assert len({shard_of(k, n) for k in keys}) == n
    c = server.client()
    before = c.info("peregrine")
    for round_ in range(20):
        pipe = c.pipeline(transaction=False)
        for i, k in enumerate(keys):
            pipe.set(k, f"{round_}:{i}")
            pipe.incr(f"{k}:n")
            pipe.get(k)
        pipe.delete(keys[3])
        pipe.get(keys[3])
        pipe.lpush(f"{keys[7]}:l", round_)
        expect = []
        for i in range(len(keys)):
            expect += [True, round_ + 1, f"{round_}:{i}".encode()]
        assert pipe.execute() == expect + [1, None, round_ + 1]
    assert c.mget([f"{k}:n" for k in keys]) == [b"20"] * len(keys)
    if not IS_REDIS:
        after = c.info("peregrine")
        # (A round may run as a relay instead: one that finds a shard still
        # closed to groups, as INFO above borrowed every shard and the
        # worker has not yet taken it back.)
        assert after["cross_shard_write_groups"] - before["cross_shard_write_groups"] >= 10


def test_a_deep_pipeline_is_read_no_faster_than_it_runs(workers):
    # A client that sends far more than it reads back: while its commands
    # wait for others running elsewhere its socket is not read past a bound
    # (ClientIo::kHeldInputMax, 1 MB), so its unread input stays small, it is
    # not closed, and every command runs once.
    server, n = workers
    keys = [f"deep{i}" for i in range(16)]
    count = 200_000
    payload = b"".join(encode("INCR", keys[i % len(keys)]) for i in range(count))
    s = socket.create_connection((server.host, server.port), timeout=30)
    s.sendall(b"CLIENT ID\r\n")
    ident = int(s.recv(100)[1:-2])
    sent = threading.Event()

    def send():
        s.sendall(payload)
        sent.set()

    sender = threading.Thread(target=send)
    sender.start()
    monitor = server.client()
    most, got, buf = 0, 0, b""
    deadline = time.monotonic() + 60
    while got < count and time.monotonic() < deadline:
        for line in monitor.execute_command("CLIENT", "LIST").decode().splitlines():
            f = dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)
            if int(f["id"]) == ident:
                most = max(most, int(f["qbuf"]))
        buf += s.recv(1 << 20)
        got += buf.count(b"\r\n")
        buf = buf[buf.rfind(b"\r\n") + 2:]
    sender.join(timeout=30)
    s.close()
    assert sent.is_set() and got == count
    assert sum(int(v) for v in monitor.mget(keys)) == count
    assert most <= (1 << 20) + 64 * 1024, most


def test_replies_before_a_blocked_command_elsewhere_are_not_held(workers):
    # The replies to what a pipeline ran here wait for those of the batch
    # that carries its next commands elsewhere (one write for both). A
    # command that blocks there sends its wait back with the batch at once:
    # the replies before it go out now, as Redis writes them before the
    # client blocks.
    server, n = workers
    for target in range(n):
        q = next(f"bq{target}:{i}" for i in range(1000) if shard_of(f"bq{target}:{i}", n) == target)
        s = socket.create_connection((server.host, server.port), timeout=10)
        s.sendall(encode("PING") + encode("SET", f"{q}:x", "1") + encode("BLPOP", q, "0"))
        got = b""
        while got.count(b"\r\n") < 2:
            got += s.recv(1000)
        assert got == b"+PONG\r\n+OK\r\n", got
        server.client().rpush(q, "v")
        while got.count(b"\r\n") < 7:
            got += s.recv(1000)
        assert got[len(b"+PONG\r\n+OK\r\n"):] == b"*2\r\n$%d\r\n%s\r\n$1\r\nv\r\n" % (len(q), q.encode())
        s.close()
