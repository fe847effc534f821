#!/usr/bin/env python3
"""Lists (#17), a first check of memory per item: Peregrine against Debian's
redis-server, each freshly started, RSS after loading (and a second to
settle) minus RSS when empty, divided by the items, for
  1M 8-byte items (v0000000...) in one list (RPUSH, 100 per command)
  100K lists of 10 such items
and the time a DEL of the loaded list takes. One run, no docs written: the
list rows of `make bench` (rounds, medians, speed) are still to come.

    python3 bench/list_memory.py [build/release/peregrine]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
from containers import send_all  # noqa: E402


def load_one_list(port: int, n: int):
    send_all(port, (bl.encode("RPUSH", "biglist", *[b"v%07d" % i for i in range(s, min(n, s + 100))])
                    for s in range(0, n, 100)), 20)


def load_small_lists(port: int, keys: int):
    send_all(port, (bl.encode("RPUSH", b"q:%08d" % k, *[b"v%07d" % (k + m) for m in range(10)])
                    for k in range(keys)))


SHAPES = [
    # title, loader, argument, items, a key to look at and delete
    ("1M 8-byte items in one list", load_one_list, 1_000_000, 1_000_000, "biglist"),
    ("100K lists of 10 items", load_small_lists, 100_000, 1_000_000, "q:00000000"),
]


def main() -> int:
    pbin = str(Path(sys.argv[1] if len(sys.argv) > 1 else bl.DEFAULT_PEREGRINE).resolve())
    workdir = tempfile.mkdtemp(prefix="peregrine-listmem-")
    results = {}
    for spec in (bl.peregrine_spec(pbin), bl.redis_spec("redis-server")):
        for title, loader, arg, items, key in SHAPES:
            srv = bl.Server(spec, workdir)
            try:
                time.sleep(0.3)
                rss0 = srv.rss_kb()
                loader(srv.port, arg)
                time.sleep(1.0)
                rss1 = srv.rss_kb()
                c = srv.client()
                try:
                    enc = c.call("OBJECT", "ENCODING", key)
                    t = time.monotonic()
                    c.call("DEL", key)
                    del_ms = (time.monotonic() - t) * 1000
                finally:
                    c.close()
            finally:
                srv.kill()
            per_item = (rss1 - rss0) * 1024 / items
            results[(spec.name, title)] = per_item
            enc = enc.decode() if isinstance(enc, bytes) else enc
            print(f"{spec.name:10} {title:30} {per_item:6.2f} B/item  {enc:9}  DEL {del_ms:.2f} ms")
    for title, *_ in SHAPES:
        print(f"ratio      {title:30} {results[('peregrine', title)] / results[('redis', title)]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
