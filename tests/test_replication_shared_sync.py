# One snapshot for several replicas (issue #38, docs/replication.md "Full
# sync"): repl-diskless-sync-delay and repl-diskless-sync-max-replicas
# gather the replicas that ask for a diskless sync; a replica that asks
# while a disk-based sync writes its file joins it. Every test runs
# against Debian's redis-server too (TEST_SERVER=redis): the replicas are
# made by hand, so that what each receives can be compared byte for byte.
import re
import socket
import time

from helpers import Asking, wait_for


def test_replicas_within_the_delay_share_one_diskless_snapshot(start_server):
    server = start_server("--repl-diskless-sync-delay", "2")
    p = server.client()
    for i in range(200):
        p.set(f"k:{i}", i)
    t0 = time.monotonic()
    a = Asking(server)
    # Both wait for the delay: no snapshot yet.
    assert wait_for(lambda: p.info("replication")["connected_slaves"] == 1)
    assert p.info("replication")["slave0"]["state"] == "wait_bgsave"
    assert p.info("persistence")["rdb_bgsave_in_progress"] == 0
    p.set("between", "1")  # (moves the offset: a snapshot of its own would say so)
    b = Asking(server)
    try:
        offset_a, offset_b = a.fullresync(), b.fullresync()
        assert time.monotonic() - t0 >= 0.9  # (Redis counts the delay in whole seconds)
        assert offset_a == offset_b
        rdb_a, rdb_b = a.payload(), b.payload()
        assert rdb_a.startswith(b"REDIS00") and rdb_a == rdb_b
        assert b"between" in rdb_a
        assert server.output().count("Starting BGSAVE for SYNC") == 1
        assert p.info("stats")["sync_full"] == 2
        p.set("after", "2")
        assert b"after" in a.stream_until(b"after") and b"after" in b.stream_until(b"after")
        assert wait_for(lambda: [p.info("replication").get(f"slave{i}", {}).get("state") for i in (0, 1)]
                        == ["online", "online"])
    finally:
        a.close()
        b.close()


def test_max_replicas_starts_the_sync_before_the_delay(start_server):
    server = start_server("--repl-diskless-sync-delay", "60", "--repl-diskless-sync-max-replicas", "2")
    p = server.client()
    p.set("k", "v")
    a = Asking(server)
    try:
        assert wait_for(lambda: p.info("replication")["connected_slaves"] == 1)
        time.sleep(0.5)
        assert p.info("persistence")["rdb_bgsave_in_progress"] == 0
        t0 = time.monotonic()
        b = Asking(server)
        try:
            assert a.fullresync() == b.fullresync()
            assert a.payload() == b.payload()
            assert time.monotonic() - t0 < 10
        finally:
            b.close()
    finally:
        a.close()


def test_a_replica_joins_the_disk_based_sync_writing_its_file(start_server, tmp_path):
    # repl-diskless-sync no: a replica that asks while the file for another
    # is being written gets the same file, the stream kept since it began,
    # and the same offset (Redis's "Waiting for end of BGSAVE for SYNC").
    server = start_server("--dir", str(tmp_path), "--repl-diskless-sync", "no")
    p = server.client()
    for i in range(1000):
        p.set(f"k:{i}", i)
    p.config_set("rdb-key-save-delay", "2000")  # (the file takes about 2 s)
    a = Asking(server)
    b = None
    try:
        offset_a = a.fullresync()
        assert p.info("persistence")["rdb_bgsave_in_progress"] == 1
        p.set("between", "1")  # (after the snapshot's point: in the stream)
        b = Asking(server)
        assert b.fullresync() == offset_a
        assert wait_for(lambda: "Waiting for end of BGSAVE for SYNC" in server.output())
        p.config_set("rdb-key-save-delay", "0")
        rdb_a, rdb_b = a.payload(), b.payload()
        assert rdb_a.startswith(b"REDIS00") and rdb_a == rdb_b
        assert b"between" not in rdb_a
        assert server.output().count("Starting BGSAVE for SYNC") == 1
        for r in (a, b):
            assert b"between" in r.stream_until(b"between")
    finally:
        a.close()
        if b is not None:
            b.close()


def test_a_replica_gone_from_a_shared_sync_leaves_the_others_theirs(start_server):
    server = start_server("--repl-diskless-sync-delay", "1", "--repl-diskless-sync-max-replicas", "2")
    p = server.client()
    pipe = p.pipeline(transaction=False)
    for i in range(2000):
        pipe.set(f"k:{i}", "x" * 100)
    pipe.execute()
    p.config_set("rdb-key-save-delay", "1000")  # (about 2 s of snapshot)
    a, b = Asking(server), Asking(server)
    try:
        offset = a.fullresync()
        assert b.fullresync() == offset
        a.close()  # (mid-snapshot)
        time.sleep(0.3)
        p.config_set("rdb-key-save-delay", "0")
        rdb = b.payload()
        assert rdb.startswith(b"REDIS00") and b"k:1999" in rdb
        p.set("after", "1")
        assert b"after" in b.stream_until(b"after")
        assert wait_for(lambda: p.info("replication")["connected_slaves"] == 1)
        assert p.info("replication")["slave0"]["state"] == "online"
    finally:
        b.close()
