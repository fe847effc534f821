# Geo commands on large sets (the sorted set's skiplist encoding, thousands of members per
# search cell) and the encodings GEOADD and the store forms leave behind; a differential
# run against a real redis-server over a 10k-member set. tests/test_geo.py has the rest.
import math

from helpers import Conn, config_set, encoding, rc  # noqa: F401  (fixtures)
from test_geo import Query, SRC, diff, populate, reference  # noqa: F401  (fixtures)


def grid(n_lon, n_lat, lon0=2.0, lat0=48.0, step=0.01):
    """GEOADD arguments for a regular grid of points, named by their indexes."""
    args = []
    for i in range(n_lon):
        for j in range(n_lat):
            args += [lon0 + i * step, lat0 + j * step, "p%d_%d" % (i, j)]
    return args


def add_grid(c, key, n_lon, n_lat, **kw):
    args = grid(n_lon, n_lat, **kw)
    p = c.pipeline(transaction=False)
    for k in range(0, len(args), 3000):
        p.execute_command("GEOADD", key, *args[k:k + 3000])
    assert sum(p.execute()) == n_lon * n_lat


def test_geoadd_encodings(rc, config_set):
    # GEOADD converts as ZADD does: past 128 members or a member over 64 bytes.
    rc.execute_command("GEOADD", "k", *grid(8, 16))
    assert encoding(rc, "k") == b"listpack"
    rc.execute_command("GEOADD", "k", 1, 1, "one more")
    assert encoding(rc, "k") == b"skiplist"
    rc.execute_command("GEOADD", "l", 1, 1, "x" * 64)
    assert encoding(rc, "l") == b"listpack"
    rc.execute_command("GEOADD", "l", 1, 1, "x" * 65)
    assert encoding(rc, "l") == b"skiplist"
    rc.execute_command("GEOADD", "m", 1, 1, "a", 2, 2, "x" * 65)
    assert encoding(rc, "m") == b"skiplist"
    # A stored result is a listpack when it is small enough, by the limits in force.
    rc.execute_command("GEOADD", "src", *grid(20, 10))
    assert rc.execute_command("GEOSEARCHSTORE", "d", "src", "FROMLONLAT", 2, 48, "BYRADIUS", 2.5, "km") == 10
    assert encoding(rc, "d") == b"listpack"
    assert rc.execute_command("GEOSEARCHSTORE", "d", "src", "FROMLONLAT", 2, 48, "BYRADIUS", 50, "km") == 200
    assert encoding(rc, "d") == b"skiplist"
    assert rc.execute_command("GEORADIUS", "src", 2, 48, 50, "km", "COUNT", 128, "STOREDIST", "d") == 128
    assert encoding(rc, "d") == b"listpack"
    config_set("zset-max-listpack-entries", "4")
    assert rc.execute_command("GEOSEARCHSTORE", "d", "src", "FROMLONLAT", 2, 48, "BYRADIUS", 1.5, "km") == 5
    assert encoding(rc, "d") == b"skiplist"
    assert rc.execute_command("GEOSEARCHSTORE", "d", "src", "FROMLONLAT", 2, 48, "BYRADIUS", 1.2, "km") == 3
    assert encoding(rc, "d") == b"listpack"


def test_large_set_searches(rc):
    # 10,000 points 1.1 km or so apart: every search below crosses many cells' ranges.
    add_grid(rc, "big", 100, 100)
    assert rc.execute_command("ZCARD", "big") == 10000
    assert encoding(rc, "big") == b"skiplist"
    centre = ("FROMLONLAT", 2.5, 48.5)
    full = rc.execute_command("GEOSEARCH", "big", *centre, "BYRADIUS", 500, "km", "WITHDIST", "ASC")
    assert len(full) == 10000
    dist = {m: float(d) for m, d in full}
    assert [float(d) for _, d in full] == sorted(dist.values())
    for radius in (0.7, 3.3, 12.5, 27.1, 40.05):
        want = {m for m, d in dist.items() if d <= radius}
        assert not any(abs(d - radius) < 0.001 for d in dist.values())  # no borderline case
        got = rc.execute_command("GEOSEARCH", "big", *centre, "BYRADIUS", radius, "km")
        assert len(got) == len(set(got)) and set(got) == want, radius
        got = rc.execute_command("GEORADIUS", "big", 2.5, 48.5, radius * 1000, "m", "WITHDIST", "ASC")
        assert [m for m, _ in got] == [m for m, _ in full[:len(want)]] or {m for m, _ in got} == want
        assert [float(d) for _, d in got] == sorted(float(d) for _, d in got)
    # COUNT: the nearest n, in order (the full result's prefix up to ties).
    got = rc.execute_command("GEOSEARCH", "big", *centre, "BYRADIUS", 100, "km", "COUNT", 50, "WITHDIST")
    assert [float(d) for _, d in got] == [float(d) for _, d in full[:50]]
    got = rc.execute_command("GEOSEARCH", "big", *centre, "BYRADIUS", 100, "km", "COUNT", 50, "DESC")
    assert len(got) == 50 and {dist[m] for m in got} == {float(d) for _, d in full[-50:]}
    # COUNT … ANY: that many distinct members, all inside.
    got = rc.execute_command("GEOSEARCH", "big", *centre, "BYRADIUS", 10, "km", "COUNT", 77, "ANY")
    assert len(got) == len(set(got)) == 77 and all(dist[m] <= 10 for m in got)
    # A box: within half the height in latitude and half the width along the parallel.
    got = rc.execute_command("GEOSEARCH", "big", *centre, "BYBOX", 20, 10, "km", "WITHCOORD")
    assert got and len(got) < 10000
    for _, (lon, lat) in got:
        assert abs(float(lat) - 48.5) * 111.2 <= 5.01
        assert abs(float(lon) - 2.5) * 111.2 * math.cos(math.radians(float(lat))) <= 10.01
    # From a member, storing: the whole result, the member itself at distance 0.
    assert rc.execute_command("GEOSEARCHSTORE", "d", "big", "FROMMEMBER", "p0_0", "BYRADIUS", 30, "km",
                              "STOREDIST") == len(rc.execute_command("GEORADIUSBYMEMBER", "big", "p0_0", 30, "km"))
    assert rc.execute_command("ZSCORE", "d", "p0_0") == b"0"
    assert rc.execute_command("ZRANGE", "d", 0, 0) == [b"p0_0"]
    assert encoding(rc, "d") == b"skiplist"
    assert rc.execute_command("GEORADIUS", "big", 2.5, 48.5, 1000, "km", "STORE", "d") == 10000
    assert rc.execute_command("ZRANGE", "d", 0, -1, "WITHSCORES") == rc.execute_command(
        "ZRANGE", "big", 0, -1, "WITHSCORES")


def test_differential_large_set(diff):
    # 10,000 random points (skiplist), the same searches on both servers.
    d = diff
    populate(d, n=10000)
    d.same("OBJECT", "ENCODING", SRC)
    rnd = d.rnd
    # (Few: whole-world searches return all 10k members, slow to compare in Python.)
    for _ in range(60):
        q = Query(d)
        d.search(q.geosearch(), q)
    for _ in range(25):
        q = Query(d, radius_only=True)
        d.search(q.georadius(ro=rnd.random() < 0.5), q)
    for _ in range(25):
        dst = rnd.choice(("b", "c", "x"))
        storedist = rnd.random() < 0.5
        q = Query(d, store=True)
        d.stored(q.geosearchstore(dst, storedist, rnd), q, dst, storedist)
        d.same("TYPE", dst)
        if d.same("EXISTS", dst):
            d.same("OBJECT", "ENCODING", dst)


def test_raw_with_options(server):
    # One reply byte for byte in RESP2, WITH* fields together.
    with Conn(server) as c:
        assert c.call("GEOADD", "k", 13.361389, 38.115556, "Palermo") == b":1\r\n"
        assert c.call("GEOSEARCH", "k", "FROMLONLAT", 13.36, 38.11, "BYRADIUS", 5, "km", "WITHDIST",
                      "WITHHASH", "WITHCOORD") == (
            b"*1\r\n*4\r\n$7\r\nPalermo\r\n$6\r\n0.6299\r\n:3479099956230698\r\n"
            b"*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n")
        assert c.call("GEOPOS", "k", "Palermo") == (
            b"*1\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n")
