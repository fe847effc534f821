#!/usr/bin/env python3
"""Writes the cluster_node fuzzer's seed corpus (checked in).

    python3 fuzz/make_cluster_node_corpus.py   # rewrites fuzz/corpus/cluster_node/

A seed is a program in the fuzzer's input language
(fuzz/cluster_node/message_gen.h): a header byte, then operations that
build cluster bus messages. Each seed below is one story the node should
hear: a known node's PING with its own slots, with more slots and a newer
epoch, with an older one; a MEET from a stranger; gossip of new nodes and
of a failing one; FAIL; UPDATE; a primary turned replica (in its shard and
out of it); forgotten nodes; hostnames; an epoch collision; the other
message types; and a stream with corrupt, cut and raw bytes in it. File
names are the seed's label.
"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus", "cluster_node")

# Header bits (cluster_node_fuzzer.cc).
ANNOUNCE_IP, CHECK_EACH_LINK, ROUND_TRIP = 4, 32, 64
# Operations and their modifiers (message_gen.h).
PING, PONG, MEET, FAIL, UPDATE, OTHER, RAW, FLUSH = range(8)
MUTATE, CUT, END_LINK, NO_EXT, TWICE = 0x08, 0x10, 0x20, 0x40, 0x80
# Names: the nodes of nodes.conf, then ids no one knows at first.
A, B, C, D, E, F = range(6)
POOL = 6  # .. 17
ZERO, CAPITALS, SHORT = 18, 19, 20
VIEW = 0x80  # + n: the n-th node of CLUSTER NODES now
# Node flags.
MASTER, SLAVE, PFAIL, FAILED, NOADDR = 1, 2, 4, 8, 64


def addr(n):
    """The address byte for 127.0.0.N at port 6999 + N (where nodes.conf has node N)."""
    return n | (n << 3)


ADDR = {A: addr(1), B: addr(2), C: addr(3), D: addr(4), E: addr(5), F: addr(6)}


def slots(base=False, add=(), remove=()):
    """A slot spec: from the node's own slots or none, then ranges."""
    ranges = [(0, first, count) for first, count in add] + [(1, first, count) for first, count in remove]
    assert len(ranges) <= 3
    out = bytes([(0x80 if base else 0) | len(ranges)])
    for how, first, count in ranges:
        assert 1 <= count <= 200
        out += bytes([how]) + struct.pack(">H", first) + bytes([count - 1])
    return out


def header(sender, current=0, config=0, flags=MASTER, slaveof=None, slot_spec=None, address=None,
           offset=0, mflags=0, state=0):
    out = bytes([sender, current, config, flags])
    out += bytes([0]) if slaveof is None else bytes([0x40, slaveof])
    out += slot_spec if slot_spec is not None else slots(base=True)
    out += bytes([ADDR.get(sender, 0) if address is None else address, offset, mflags, state])
    return out


def gossip(name, flags=MASTER, address=None, age=0):
    return bytes([name, flags, ADDR.get(name, addr(7)) if address is None else address, age])


def ping_body(gossips=(), hostname=None, nodename=None, shard=None, forgotten=()):
    out = bytes([len(gossips)]) + b"".join(gossips)
    ext = ((1 if hostname is not None else 0) | (2 if nodename is not None else 0) |
           (4 if shard is not None else 0) | (8 if forgotten else 0))
    out += bytes([ext])
    if hostname is not None:
        out += bytes([hostname])
    if nodename is not None:
        out += bytes([nodename])
    if shard is not None:
        out += bytes([shard])
    if forgotten:
        out += bytes([len(forgotten) - 1]) + b"".join(bytes([n, ttl]) for n, ttl in forgotten)
    return out


def ping(sender, op=PING, mods=0, body=None, **fields):
    return bytes([op | mods]) + header(sender, **fields) + (body if body is not None else ping_body())


def fail(sender, about, mods=0, **fields):
    return bytes([FAIL | mods]) + header(sender, **fields) + bytes([about])


def update(sender, about, epoch, slot_spec, mods=0, **fields):
    return bytes([UPDATE | mods]) + header(sender, **fields) + bytes([about, epoch]) + slot_spec


def other(type_byte, sender, tail=b"", mods=0, **fields):
    return bytes([OTHER | mods, type_byte]) + header(sender, **fields) + tail


def raw(data):
    return bytes([RAW, len(data) - 1]) + data


FLUSH_OP = bytes([FLUSH])

SEEDS = {
    "ping_known_same_slots": [ANNOUNCE_IP, ping(B, current=3, config=2)],
    "ping_newer_epoch_takes_slots": [ANNOUNCE_IP, ping(B, current=5, config=5,
                                                       slot_spec=slots(base=True, add=[(0, 100), (5000, 3)]))],
    "ping_older_epoch_keeps_slots": [ANNOUNCE_IP, ping(C, current=3, config=1,
                                                       slot_spec=slots(base=True, add=[(5461, 50)]))],
    "ping_claims_open_slots": [ANNOUNCE_IP, ping(B, config=7, slot_spec=slots(base=True, add=[(100, 1), (6000, 1)]))],
    "meet_from_a_stranger": [ANNOUNCE_IP, ping(POOL, op=MEET, address=addr(7),
                                              body=ping_body([gossip(POOL + 1)]))],
    "meet_then_ping_from_the_handshake": [ANNOUNCE_IP | CHECK_EACH_LINK,
                                          ping(POOL, op=MEET, mods=END_LINK, address=addr(7)),
                                          ping(VIEW + 6, address=addr(7))],
    "gossip_new_nodes_and_a_failing_one": [ANNOUNCE_IP, ping(B, config=2, body=ping_body(
        [gossip(POOL + 2), gossip(POOL + 3, SLAVE), gossip(POOL + 4, MASTER | NOADDR), gossip(F, MASTER | PFAIL)]))],
    "gossip_invalid_ids": [ANNOUNCE_IP, ping(C, config=3, body=ping_body([gossip(POOL + 2), gossip(CAPITALS)]))],
    "fail_about_a_primary": [ANNOUNCE_IP, fail(B, C, config=2)],
    "fail_from_a_stranger": [ANNOUNCE_IP, fail(POOL, C)],
    "update_moves_slots": [ANNOUNCE_IP, update(B, C, 9, slots(base=True, add=[(0, 10)]), config=2)],
    "update_about_a_replica": [ANNOUNCE_IP, update(B, D, 9, slots(add=[(5461, 100)]), config=2)],
    "primary_turns_replica_elsewhere": [ANNOUNCE_IP, ping(B, config=2, slaveof=C)],
    "failover_in_a_shard": [ANNOUNCE_IP, ping(B, config=4, slaveof=D)],
    "replica_changes_primary": [ANNOUNCE_IP, ping(D, flags=SLAVE, slaveof=C, slot_spec=slots())],
    "forgotten_nodes": [ANNOUNCE_IP, ping(C, config=3, body=ping_body(forgotten=[(F, 60), (B, 10)]))],
    "hostname_nodename_shard": [ANNOUNCE_IP, ping(B, config=2, body=ping_body(hostname=0, nodename=2, shard=D))],
    "odd_hostnames": [ANNOUNCE_IP | ROUND_TRIP, ping(B, config=2, body=ping_body(hostname=3, nodename=6))],
    "epoch_collision": [ANNOUNCE_IP, ping(B, config=1)],
    "other_types": [ANNOUNCE_IP, other(0, B, b"\x00\x00"), other(2, B), other(3, C), other(4, D),
                    other(5, B, b"\x07\x01\x00"), other(6, B)],
    "round_trip": [ANNOUNCE_IP | ROUND_TRIP,
                   ping(B, config=6, slot_spec=slots(base=True, add=[(0, 20)]),
                        body=ping_body([gossip(POOL + 5)], hostname=1)),
                   fail(C, F, config=3)],
    "stream_with_bad_bytes": [CHECK_EACH_LINK,
                              ping(B, config=2, mods=MUTATE) + struct.pack(">H", 2) + b"\x01",
                              ping(C, config=3),
                              ping(D, flags=SLAVE, slaveof=B, mods=CUT) + struct.pack(">H", 1000),
                              ping(C, config=3), FLUSH_OP,
                              raw(b"RCmb\x00\x00\x08\xd0\x00\x01" + bytes(30)),
                              ping(B, config=2, mods=TWICE | NO_EXT, body=ping_body(hostname=0))],
    "learns_its_address": [0, ping(B, config=2, mods=END_LINK), ping(POOL, op=MEET, address=0)],
}


def main():
    shutil.rmtree(CORPUS, ignore_errors=True)
    os.makedirs(CORPUS)
    for label, parts in SEEDS.items():
        data = bytes([parts[0]]) + b"".join(parts[1:])
        with open(os.path.join(CORPUS, label), "wb") as f:
            f.write(data)
    print(f"wrote {len(SEEDS)} seeds to {os.path.relpath(CORPUS)}")


if __name__ == "__main__":
    main()
