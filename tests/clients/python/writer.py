# A redis-py RedisCluster writer for tests/test_cluster_clients.py, run by
# the tests' own Python (redis-py from tests/requirements.txt).
#
#   python writer.py SEED_HOST:PORT N PREFIX RATE HOT
#
# The same program as tests/clients/go/main.go, node/writer.js and
# java/.../Writer.java: given one node's address only, the client finds the
# rest of the cluster. Worker threads take indexes 0, 1, 2, ... from one
# counter, index i not before i/RATE seconds from the start. For index i one
# of them writes PREFIX:i (no hash tag: these keys spread over the slots)
# with value(i); when i%4 == 1 also {HOT}PREFIX:i (HOT: a hash tag whose slot
# the test moves, so that the slot holds many keys, and is written to, while
# it is migrated: ASK and ASKING); when i%25 == 0 it MSETs and MGETs a pair,
# {PREFIX:m<i>}a / b (i%50 == 0) or {HOT}PREFIX:m<i>a / b (TRYAGAIN while the
# slot is half moved). It reads back its own writes from a few indexes
# before. It goes on until it has taken at least N indexes AND its standard
# input is closed, so every index below the final count was written exactly
# once. RedisCluster follows MOVED and ASK, and retries TRYAGAIN, within a
# fixed budget of 16 tries (RedisClusterRequestTTL): a multi-key write to a
# slot being moved, answered ASK, TRYAGAIN and MOVED in turn until the slot
# has moved, gets ClusterError("TTL exhausted.") after ~0.1 s, against Redis
# as against any server. Such a command is sent again here (for up to 12 s),
# as a redis-py application has to; those retries are counted apart
# (app_retries). Anything else that reaches the program is counted as an
# error and printed to stderr. The last line on stdout is a JSON object of counts; the
# exit status is 1 when any error or wrong read-back was counted.
import json
import sys
import threading
import time

from redis.backoff import ExponentialBackoff
from redis.cluster import RedisCluster
from redis.exceptions import ClusterError, TryAgainError
from redis.retry import Retry

WORKERS = 4
READ_LAG = 8  # each worker reads back its own write from this many writes before
HOT_EVERY = 4  # a {HOT} key for index i when i % HOT_EVERY == 1
MULTI_EVERY = 25  # a pair when i % MULTI_EVERY == 0: {HOT} ones when i % 50 != 0
RETRY_LIMIT = 1200  # times 10 ms
MAX_DURATION = 240.0
MAX_INDEXES = 2_000_000


def value(prefix, i):
    """The value of keys PREFIX:i and {HOT}PREFIX:i; the test computes the same."""
    return "%s=%d#%d" % (prefix, i, (i * i) % 1000003)


def main():
    if len(sys.argv) != 6:
        print("usage: writer.py HOST:PORT N PREFIX RATE HOT", file=sys.stderr)
        return 2
    host, _, port = sys.argv[1].rpartition(":")
    n, prefix, rate, hot = int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5]
    cluster = RedisCluster(host=host, port=int(port), socket_timeout=10, socket_connect_timeout=5,
                           retry=Retry(ExponentialBackoff(cap=0.2, base=0.005), 20), decode_responses=True)
    stopped = threading.Event()

    def watch_stdin():
        while sys.stdin.buffer.read(4096):
            pass
        stopped.set()
    threading.Thread(target=watch_stdin, daemon=True).start()

    lock = threading.Lock()
    counts = {"client": "redis-py", "keys": 0, "writes_ok": 0, "reads_ok": 0, "multi_ok": 0, "errors": 0,
              "mismatches": 0, "app_retries": 0, "deadline_hit": False}
    state = {"next": 0}
    start = time.monotonic()

    def bump(name):
        with lock:
            counts[name] += 1

    def fail(what, e):
        bump("errors")
        print("%s: %r" % (what, e), file=sys.stderr, flush=True)

    def take():
        """The next index, or None once it is time to stop."""
        with lock:
            if state["next"] >= n and stopped.is_set():
                return None
            if time.monotonic() - start > MAX_DURATION or state["next"] >= MAX_INDEXES:
                counts["deadline_hit"] = True
                return None
            state["next"] += 1
            return state["next"] - 1

    def retrying(command, *args):
        """command(*args), again after redis-py gave up on a slot in migration."""
        for attempt in range(RETRY_LIMIT + 1):
            try:
                return command(*args)
            except (ClusterError, TryAgainError):
                if attempt == RETRY_LIMIT:
                    raise
                bump("app_retries")
                time.sleep(0.01)

    def set_(key, i):
        try:
            retrying(cluster.set, key, value(prefix, i))
            bump("writes_ok")
        except Exception as e:  # noqa: BLE001
            fail("SET " + key, e)

    def work():
        mine = []
        while (i := take()) is not None:
            time.sleep(max(0.0, start + i / rate - time.monotonic()))
            set_("%s:%d" % (prefix, i), i)
            if i % HOT_EVERY == 1:
                set_("{%s}%s:%d" % (hot, prefix, i), i)
            mine.append(i)
            if len(mine) > READ_LAG:
                j = mine[-1 - READ_LAG]
                keys = ["%s:%d" % (prefix, j)] + (["{%s}%s:%d" % (hot, prefix, j)] if j % HOT_EVERY == 1 else [])
                for k in keys:
                    try:
                        got = retrying(cluster.get, k)
                        if got == value(prefix, j):
                            bump("reads_ok")
                        else:
                            bump("mismatches")
                            print("GET %s: %r, want %r" % (k, got, value(prefix, j)), file=sys.stderr, flush=True)
                    except Exception as e:  # noqa: BLE001
                        fail("GET " + k, e)
            if i % MULTI_EVERY == 0:
                tag = "{%s:m%d}" % (prefix, i) if i % (2 * MULTI_EVERY) == 0 else "{%s}%s:m%d" % (hot, prefix, i)
                a, b = "a:%d" % i, "b:%d" % i
                try:
                    retrying(cluster.mset, {tag + "a": a, tag + "b": b})
                    got = retrying(cluster.mget, tag + "a", tag + "b")
                    if got == [a, b]:
                        bump("multi_ok")
                    else:
                        bump("mismatches")
                        print("MGET %s: %r" % (tag, got), file=sys.stderr, flush=True)
                except Exception as e:  # noqa: BLE001
                    fail("MSET/MGET " + tag, e)

    threads = [threading.Thread(target=work) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cluster.close()
    counts["keys"] = state["next"]
    print(json.dumps(counts), flush=True)
    bad = counts["errors"] or counts["mismatches"] or counts["deadline_hit"] or counts["keys"] < n
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
