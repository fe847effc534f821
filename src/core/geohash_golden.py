#!/usr/bin/env python3
"""Digests of a real Redis's GEO replies for geohash_test.cc (GeohashGolden).

Both sides generate the same pseudo-random points and queries (SplitMix64, so
the C++ test needs no data file), run them (here: against redis-server; there:
through core/geohash.h), write one line per reply and hash each section with
FNV-1a 64. The test holds the digests printed here. To regenerate:

    redis-server --port 7411 --save '' --daemonize yes
    python3 src/core/geohash_golden.py 7411
    redis-cli -p 7411 shutdown nosave

Standard library only: a tiny RESP2 client.
"""
import socket
import sys

MASK = (1 << 64) - 1
UNITS = ["m", "km", "mi", "ft"]
NUM_POINTS = 3000
NUM_QUERIES = 600


class SplitMix64:
    def __init__(self, seed):
        self.state = seed

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


class Redis:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(1 << 16)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind in (b"+", b":"):
            return rest.decode()
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 16)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data.decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise RuntimeError(line)

    def pipeline(self, commands):
        out = bytearray()
        for args in commands:
            out += b"*%d\r\n" % len(args)
            for a in args:
                a = str(a).encode()
                out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(bytes(out))
        return [self._reply() for _ in commands]


def fnv1a(lines):
    h = 0xCBF29CE484222325
    for line in lines:
        for b in (line + "\n").encode():
            h = ((h ^ b) * 0x100000001B3) & MASK
    return h


def point(rng, i):
    """The i-th point: half anywhere in the limits, half in a 1 x 1 degree cluster."""
    a, b = rng.next(), rng.next()
    if i % 2 == 0:
        return (a % 3600001 - 1800000) / 10000.0, (b % 1701023 - 850511) / 10000.0
    return (130000 + a % 10001) / 10000.0, (380000 + b % 10001) / 10000.0


def main():
    r = Redis(int(sys.argv[1]) if len(sys.argv) > 1 else 7411)
    rng = SplitMix64(0x67656F68617368)
    points = [point(rng, i) for i in range(NUM_POINTS)]
    r.pipeline([["DEL", "golden"]])
    args = ["GEOADD", "golden"]
    for i, (lon, lat) in enumerate(points):
        args += [repr(lon), repr(lat), "p%d" % i]
    r.pipeline([args])

    names = ["p%d" % i for i in range(NUM_POINTS)]
    scores = r.pipeline([["ZSCORE", "golden", n] for n in names])
    positions = r.pipeline([["GEOPOS", "golden", n] for n in names])
    hashes = r.pipeline([["GEOHASH", "golden", n] for n in names])
    # ZSCORE prints %.17g; int(float()) recovers the stored double exactly.
    lines = ["%d %s %s %s" % (int(float(s)), p[0][0], p[0][1], h[0]) for s, p, h in zip(scores, positions, hashes)]
    print("positions", hex(fnv1a(lines)))

    dists = r.pipeline([["GEODIST", "golden", names[i], names[(i * 7 + 3) % NUM_POINTS], UNITS[i % 4]]
                        for i in range(NUM_POINTS)])
    print("distances", hex(fnv1a(dists)))

    searches = []
    for q in range(NUM_QUERIES):
        lon, lat = point(rng, q)
        unit = UNITS[q % 4]
        # Sizes: up to ~3000 km anywhere, up to ~50 km in the cluster.
        limit = {"m": 3000000, "km": 3000, "mi": 2000, "ft": 10000000}[unit]
        if q % 2 == 1:
            limit = {"m": 50000, "km": 50, "mi": 30, "ft": 150000}[unit]
        a, b = rng.next() % limit + 1, rng.next() % limit + 1
        shape = ["BYRADIUS", a, unit] if q % 3 != 2 else ["BYBOX", a, b, unit]
        searches.append(["GEOSEARCH", "golden", "FROMLONLAT", repr(lon), repr(lat)] + shape + ["WITHDIST"])
        searches.append(["GEOSEARCH", "golden", "FROMLONLAT", repr(lon), repr(lat)] + shape + ["COUNT", 5, "ANY"])
    replies = r.pipeline(searches)
    lines = []
    found = 0
    for q in range(NUM_QUERIES):
        full, any5 = replies[2 * q], replies[2 * q + 1]
        found += len(full)
        lines.append(" ".join("%s %s" % (m, d) for m, d in full))
        lines.append(" ".join(any5))
    print("searches", hex(fnv1a(lines)), "members found", found)
    r.pipeline([["DEL", "golden"]])


if __name__ == "__main__":
    main()
