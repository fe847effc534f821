# Sharded Pub/Sub in cluster mode (issue #39): SSUBSCRIBE, SUNSUBSCRIBE and
# SPUBLISH route by their channel's slot (-MOVED, -CROSSSLOT), are served by
# the slot's replicas without READONLY, reach the other nodes of the slot's
# shard over the bus (PUBLISHSHARD), and a slot handed to another primary
# unsubscribes its channels' subscribers. On a cluster of two Peregrine
# primaries and one redis-server primary with replicas of either kind, so the
# bus messages cross kinds; with TEST_SERVER=redis every node is Redis.
from conftest import TEST_SERVER
from helpers import Conn, encode
from test_cluster import (cluster_check, converged, hand_over_empty_slot, key_slot, mixed,  # noqa: F401
                          myself_line, owner_of, roles, tag_for)
from test_pubsub import push


def primaries(nodes):
    return [n for n in nodes if "master" in myself_line(n)[2]]


def channel_of(nodes, primary, prefix="ch", avoid=-1):
    """A channel whose slot (not `avoid`) `primary` serves."""
    return "%s{%s}" % (prefix, tag_for(lambda s: s != avoid and owner_of(nodes, s) is primary))


def ssubscribe(node, *channels):
    c = Conn(node)
    c.send(encode("SSUBSCRIBE", *channels))
    return c


class TestShardedPubSub:
    # (test_cluster.py's mixed cluster: a class of its own here.)
    def test_routing_by_slot(self, mixed):
        a, b = primaries(mixed)[:2]
        mine, theirs = channel_of(mixed, a), channel_of(mixed, b)
        moved = b"-MOVED %d %s\r\n" % (key_slot(theirs), b.addr.encode())
        for cmd in (("SSUBSCRIBE", theirs), ("SPUBLISH", theirs, "m"), ("SUNSUBSCRIBE", theirs)):
            assert a.raw(*cmd) == moved, cmd
        assert a.raw("SSUBSCRIBE", mine, theirs) == b"-CROSSSLOT Keys in request don't hash to the same slot\r\n"
        assert a.raw("SPUBLISH", mine, "m") == b":0\r\n"
        # PUBLISH and SUBSCRIBE know no slots; SUNSUBSCRIBE of nothing neither.
        assert a.raw("PUBLISH", theirs, "m") == b":0\r\n"
        assert a.raw("SUNSUBSCRIBE") == b"*3\r\n$12\r\nsunsubscribe\r\n$-1\r\n:0\r\n"
        with ssubscribe(a, mine, mine + "x") as s:
            assert [s.read_reply() for _ in range(2)] == [push("ssubscribe", mine, 1),
                                                          push("ssubscribe", mine + "x", 2)]
            assert a.raw("SPUBLISH", mine, "hi") == b":1\r\n"
            assert s.read_reply() == push("smessage", mine, "hi")
            # A subscriber's later SSUBSCRIBE elsewhere is redirected too.
            s.send(encode("SSUBSCRIBE", theirs))
            assert s.read_reply() == moved

    def test_a_shard_hears_its_own_channels(self, mixed):
        # Per shard: a subscriber on the primary and one on its replica (no
        # READONLY needed); SPUBLISH on either node counts its own subscribers
        # and reaches the other's over the bus.
        pairs = roles(mixed)
        assert len(pairs) == 3
        for replica, primary in pairs.items():
            ch = channel_of(mixed, primary, "shard")
            with ssubscribe(primary, ch) as on_primary, ssubscribe(replica, ch) as on_replica:
                assert on_primary.read_reply() == push("ssubscribe", ch, 1)
                assert on_replica.read_reply() == push("ssubscribe", ch, 1)
                assert primary.raw("SPUBLISH", ch, "from-primary") == b":1\r\n"
                assert on_primary.read_reply() == push("smessage", ch, "from-primary")
                assert on_replica.read_reply() == push("smessage", ch, "from-primary"), (replica.kind, primary.kind)
                assert replica.raw("SPUBLISH", ch, "from-replica") == b":1\r\n"
                assert on_replica.read_reply() == push("smessage", ch, "from-replica")
                assert on_primary.read_reply() == push("smessage", ch, "from-replica"), (replica.kind, primary.kind)
                # Nobody else in the cluster heard them: no node of another
                # shard can have subscribed (-MOVED), and a plain subscriber
                # of the same name hears nothing.
                others = [n for n in mixed if n is not primary and n is not replica]
                with Conn(others[0]) as plain:
                    plain.send(encode("SUBSCRIBE", ch))
                    assert plain.read_reply() == push("subscribe", ch, 1)
                    assert primary.raw("SPUBLISH", ch, "again") == b":1\r\n"
                    assert on_replica.read_reply() == push("smessage", ch, "again")
                    assert plain.nothing_pending(0.3)

    def test_a_slot_handed_over_unsubscribes_its_channels(self, mixed):
        # An empty slot moved from one primary to another with SETSLOT NODE:
        # the old shard's subscribers of its channels are told sunsubscribe,
        # and subscribing there again is redirected. Then back again.
        pairs = roles(mixed)
        src = next(p for p in pairs.values() if p.kind == TEST_SERVER)
        dst = next(p for p in primaries(mixed) if p is not src)
        src_replica = next(r for r, p in pairs.items() if p is src)
        ch = channel_of(mixed, src, "moving")
        slot = key_slot(ch)

        def move(a, b):
            hand_over_empty_slot(a, b, slot)
            converged(mixed)
            assert owner_of(mixed, slot) is b

        with ssubscribe(src, ch, ch + "-other") as s, ssubscribe(src_replica, ch) as r, \
                ssubscribe(src, channel_of(mixed, src, "stays", avoid=slot)) as stays:
            assert [s.read_reply() for _ in range(2)] == [push("ssubscribe", ch, 1),
                                                          push("ssubscribe", ch + "-other", 2)]
            assert r.read_reply() == push("ssubscribe", ch, 1)
            stays.read_reply()
            try:
                move(src, dst)
                got = {s.read_reply(), s.read_reply()}
                assert got == {push("sunsubscribe", ch, 1), push("sunsubscribe", ch + "-other", 0)} or \
                    got == {push("sunsubscribe", ch, 0), push("sunsubscribe", ch + "-other", 1)}, got
                assert r.read_reply() == push("sunsubscribe", ch, 0)
                assert stays.nothing_pending(0.2)
                moved = b"-MOVED %d %s\r\n" % (slot, dst.addr.encode())
                assert src.raw("SSUBSCRIBE", ch) == moved
                # Out of the subscribed context again: any command goes.
                s.send(encode("GET", "x" + ch[ch.index("{"):]))
                assert s.read_reply() == moved
            finally:
                move(dst, src)
        rc_, out = cluster_check(mixed[0])
        assert rc_ == 0 and "[WARNING]" not in out and "[OK] All 16384 slots covered." in out, out
