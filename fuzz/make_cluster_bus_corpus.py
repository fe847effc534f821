#!/usr/bin/env python3
"""Writes the cluster bus fuzzer's seed corpus and dictionary (checked in).

    python3 fuzz/make_cluster_bus_corpus.py   # rewrites fuzz/corpus/cluster_bus/ and fuzz/cluster_bus.dict

A seed is what a peer sends on a cluster bus link (fuzz/cluster_bus_fuzzer.cc):
one or more messages in Redis 7's wire format (src/cluster/bus_message.h),
written here by an encoder of its own, so the seeds also check the C++
decoder against a second reading of the layout. Every type, every ping
extension, an unknown extension and type, a stream, and a few messages
Redis refuses. File names are the seed's label.
"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus", "cluster_bus")
DICT = os.path.join(HERE, "cluster_bus.dict")

PING, PONG, MEET, FAIL, PUBLISH, AUTH_REQ, AUTH_ACK, UPDATE, MFSTART, MODULE, PUBLISHSHARD = range(11)
HEADER_LEN = 2256
EXT_DATA = 4


def name(c):
    return (c * 40).encode()


def fixed(b, width):
    return b[:width].ljust(width, b"\0")


def slots(*numbers):
    bitmap = bytearray(2048)
    for s in numbers:
        bitmap[s >> 3] |= 1 << (s & 7)
    return bytes(bitmap)


def gossip(n, ip=b"127.0.0.1", port=30001):
    return (fixed(n, 40) + struct.pack(">II", 1700000000, 1700000001) + fixed(ip, 46) +
            struct.pack(">HHHHH", port, port + 10000, 1, 0, 0))


def ext(ext_type, data):
    data += b"\0" * (-len(data) % 8)
    return struct.pack(">IHH", 8 + len(data), ext_type, 0) + data


def string_ext(ext_type, s):
    return ext(ext_type, s + b"\0")


def message(msg_type, body=b"", count=0, extensions=0, mflags0=0, version=1, totlen=None):
    header = (b"RCmb" + struct.pack(">IHHHH", 0, version, 30000, msg_type, count) +
              struct.pack(">QQQ", 5, 3, 123456) + name("a") + slots(0, 1, 100, 16383) +
              bytes(40) + fixed(b"127.0.0.1", 46) + struct.pack(">H", extensions) + bytes(30) +
              struct.pack(">HHHB", 0, 40000, 1 | 16 | 1024, 0) + bytes([mflags0, 0, 0]))
    assert len(header) == HEADER_LEN
    out = header + body
    length = len(out) if totlen is None else totlen
    return out[:4] + struct.pack(">I", length) + out[8:]


def ping(msg_type=PING, gossips=(), exts=(), flag=True):
    body = b"".join(gossips) + b"".join(exts)
    return message(msg_type, body, count=len(gossips), extensions=len(exts),
                   mflags0=EXT_DATA if flag else 0)


ALL_EXTS = [string_ext(0, b"host-a.example"), string_ext(1, b"primary-a"),
            ext(2, name("f") + struct.pack(">Q", 60)), ext(3, name("9"))]


def publish(msg_type, channel, msg):
    return message(msg_type, struct.pack(">II", len(channel), len(msg)) + channel + msg)


SEEDS = {
    "ping_all_extensions": ping(PING, [gossip(name("b")), gossip(name("c"), b"::1", 30002)], ALL_EXTS),
    "pong_shard_id_only": ping(PONG, [gossip(name("b"))], [ext(3, name("9"))]),
    "meet_no_extension_flag": ping(MEET, [], [], flag=False),
    "ping_unknown_extension": ping(PING, [], [ext(9, b"whatever"), string_ext(0, b"h")]),
    "ping_hostname_without_nul": ping(PING, [], [ext(0, b"12345678")]),
    "fail": message(FAIL, name("z")),
    "publish": publish(PUBLISH, b"news", b"hello"),
    "publishshard_empty": publish(PUBLISHSHARD, b"", b""),
    "update": message(UPDATE, struct.pack(">Q", 7) + name("u") + slots(5, 6, 7)),
    "module": message(MODULE, struct.pack(">QIB", 0x1234, 3, 1) + b"abc"),
    "auth_request": message(AUTH_REQ),
    "auth_ack": message(AUTH_ACK),
    "mfstart": message(MFSTART),
    "unknown_type": message(42, b"a body nobody reads"),
    "stream": message(MFSTART) + message(FAIL, name("z")) + ping(PONG, [], ALL_EXTS) + message(AUTH_ACK),
    # Refused, with a known length (skipped) and then a good one.
    "bad_length_then_good": message(FAIL, name("z") + b"!") + message(MFSTART),
    "bad_version_then_good": message(MFSTART, version=2) + message(MFSTART),
    "bad_padding": ping(PING, [], [struct.pack(">IHH", 12, 0, 0) + b"abcd"]),
    # Refused outright: the link is dropped.
    "bad_signature": b"RCmx" + message(MFSTART)[4:],
    "short_totlen": message(MFSTART, totlen=16),
    "partial": message(UPDATE, struct.pack(">Q", 7) + name("u") + slots(5))[:3000],
}

DICTIONARY = [b"RCmb", struct.pack(">I", HEADER_LEN), struct.pack(">H", 1),
              struct.pack(">IHH", 16, 0, 0), struct.pack(">IHH", 56, 2, 0), struct.pack(">IHH", 48, 3, 0)]


def main():
    shutil.rmtree(CORPUS, ignore_errors=True)
    os.makedirs(CORPUS)
    for label, data in SEEDS.items():
        with open(os.path.join(CORPUS, label), "wb") as f:
            f.write(data)
    with open(DICT, "w") as f:
        f.write("# libFuzzer dictionary for fuzz/cluster_bus_fuzzer.cc (written by make_cluster_bus_corpus.py)\n")
        for token in DICTIONARY:
            f.write('"' + "".join("\\x%02x" % b for b in token) + '"\n')


if __name__ == "__main__":
    main()
