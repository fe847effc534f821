# Geo commands: GEOADD (NX XX CH), GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE,
# GEORADIUS, GEORADIUSBYMEMBER and their _RO forms. Replies are checked against Redis's
# exact texts (numbers as Redis prints them, every error message), missing keys, WRONGTYPE,
# arity, RESP3 shapes, stores whose destination lives on another shard, and a seeded
# randomized differential run against a real redis-server (raw RESP, byte for byte
# wherever Redis's reply is defined; see `Diff` for where it is compared otherwise).
#
# Redis 7.0 and 7.2 have the same geo code (src/geo.c differs in one comment and one
# allocation, geohash*.c not at all). What differs is how a stored *distance* reads back
# through ZRANGE WITHSCORES or ZSCORE: 7.0 prints doubles with %.17g, 7.2 with the shortest
# digits (fpconv_dtoa; in scientific notation from 1e4 up when more than six decimals
# follow, e.g. 5.64412578701582e+4): the randomized run compares those scores by value,
# test_storedist_score_text_72 the 7.2 text.
import random

import pytest

from conftest import IS_REDIS, ServerProcess
from helpers import (  # noqa: F401  (fixtures)
    Conn, NOT_INT, SYNTAX, WRONGTYPE, arity, fails, make_list, raises, rc, rc3)

skip_72 = pytest.mark.skipif(
    IS_REDIS, reason="Redis 7.2 behaviour (double formatting of stored distances); Debian ships 7.0")

# Keys spread over shards (with --threads N).
SPREAD = ("a", "b", "c", "x", "y")

NOT_FLOAT = "value is not a valid float"
UNIT = "unsupported unit provided. please use M, KM, FT, MI"
NO_MEMBER = "could not decode requested zset member"
NEG_RADIUS = "radius cannot be negative"
NEG_BOX = "height or width cannot be negative"
COUNT_POS = "COUNT must be > 0"
ANY_COUNT = "the ANY argument requires COUNT argument"
STORE_WITH = "STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
SEARCHSTORE_WITH = "GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"


def lonlat_err(lon, lat):
    """Redis formats the rejected pair with printf's %f."""
    return "invalid longitude,latitude pair %f,%f" % (float(lon), float(lat))


def from_err(cmd):
    # The command name is echoed as the client spelled it (c->argv[0]).
    return "exactly one of FROMMEMBER or FROMLONLAT can be specified for %s" % cmd


def by_err(cmd):
    return "exactly one of BYRADIUS and BYBOX can be specified for %s" % cmd


SICILY = (13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania")
PALERMO_POS = [b"13.36138933897018433", b"38.11555639549629859"]
CATANIA_POS = [b"15.08726745843887329", b"37.50266842333162032"]
PALERMO_HASH = 3479099956230698
CATANIA_HASH = 3479447370796909

# Redis's own test data (tests/unit/geo.tcl), 7 points in New York.
NYC = (-73.9454966, 40.747533, "lic market",
       -73.9733487, 40.7648057, "central park n/q/r",
       -73.9903085, 40.7362513, "union square",
       -74.0131604, 40.7126674, "wtc one",
       -73.7858139, 40.6428986, "jfk",
       -73.9375699, 40.7498929, "q4",
       -73.9564142, 40.7480973, "4545")
NYC_CENTER = (-73.9798091, 40.7598464)


def bl(*xs):
    return [x if isinstance(x, bytes) else str(x).encode() for x in xs]


def sicily(c, key="k"):
    assert c.execute_command("GEOADD", key, *SICILY) == 2


def nyc(c, key="nyc"):
    assert c.execute_command("GEOADD", key, *NYC) == 7


# ---------------------------------------------------------------- GEOADD

def test_geoadd_adds_and_updates(rc):
    assert rc.execute_command("GEOADD", "k", *SICILY) == 2
    assert rc.execute_command("TYPE", "k") == b"zset"
    assert rc.execute_command("ZCARD", "k") == 2
    assert rc.execute_command("ZRANGE", "k", 0, -1, "WITHSCORES") == bl(
        "Palermo", PALERMO_HASH, "Catania", CATANIA_HASH)
    assert rc.execute_command("ZSCORE", "k", "Palermo") == str(PALERMO_HASH).encode()
    # The same again: nothing added; a new position is an update, not counted.
    assert rc.execute_command("GEOADD", "k", *SICILY) == 0
    assert rc.execute_command("GEOADD", "k", 1, 1, "Palermo", 2, 2, "new") == 1
    assert rc.execute_command("GEOPOS", "k", "Palermo") == [[b"0.99999994039535522", b"0.99999945914297683"]]
    # A member given twice in one call: the last position wins, counted once.
    assert rc.execute_command("GEOADD", "k", 3, 3, "twice", 13.361389, 38.115556, "twice") == 1
    assert rc.execute_command("GEOPOS", "k", "twice") == [PALERMO_POS]
    assert rc.execute_command("ZCARD", "k") == 4


def test_geoadd_nx_xx_ch(rc):
    sicily(rc)
    # CH counts members whose score changed; a move smaller than the 52-bit cell is none.
    assert rc.execute_command("GEOADD", "k", "CH", 13.361389, 38.115556, "Palermo") == 0
    assert rc.execute_command("GEOADD", "k", "CH", 13.361389, 38.115557, "Palermo") == 0
    assert rc.execute_command("GEOADD", "k", "CH", 13.4, 38.1, "Palermo", 1, 1, "new") == 2
    assert rc.execute_command("GEOADD", "k", "ch", *SICILY) == 1  # Palermo moved back
    # XX: only updates, never adds.
    assert rc.execute_command("GEOADD", "k", "XX", 5, 5, "nope", 1, 2, "new") == 0
    assert rc.execute_command("ZSCORE", "k", "nope") is None
    assert rc.execute_command("GEOPOS", "k", "new") == [[b"0.99999994039535522", b"2.0000001856465488"]]
    assert rc.execute_command("GEOADD", "k", "XX", "CH", 1, 1, "new", 5, 5, "nope", *SICILY[:3]) == 1
    assert rc.execute_command("GEOADD", "k", "xx", "ch", "ch", *SICILY[:3]) == 0
    # NX: only adds, never updates.
    assert rc.execute_command("GEOADD", "k", "NX", 1, 1, "n1", 2, 2, "Palermo") == 1
    assert rc.execute_command("GEOPOS", "k", "Palermo") == [PALERMO_POS]
    assert rc.execute_command("GEOADD", "k", "CH", "NX", 1, 1, "n2", 3, 3, "Palermo") == 1
    assert rc.execute_command("GEOADD", "k", "nx", "nx", 1, 1, "n3") == 1
    assert rc.execute_command("GEOPOS", "k", "Palermo") == [PALERMO_POS]
    assert rc.execute_command("ZCARD", "k") == 6
    # XX on a missing key creates nothing.
    assert rc.execute_command("GEOADD", "other", "XX", 1, 1, "m") == 0
    assert rc.execute_command("EXISTS", "other") == 0


def test_geoadd_errors(rc):
    sicily(rc)
    fails(rc, SYNTAX,
          ("GEOADD", "k", "XX", "NX", 1, 2, "m"),
          ("GEOADD", "k", "nx", "xx", 1, 2, "m"),
          ("GEOADD", "k", "CH", "NX", "XX", 1, 2, "m"),
          ("GEOADD", "k", "NX", "XX", "CH"),      # options only
          ("GEOADD", "k", "CH", "CH", "CH"),
          ("GEOADD", "k", "NX", 1, 2),            # not a whole triple
          ("GEOADD", "k", 1, 2, "m", 3),
          ("GEOADD", "k", 1, 2, "m", 3, 4),
          ("GEOADD", "k", 1, 2, "m", "NX"),       # options come first
          ("GEOADD", "k", "GT", 1, 2, "m"),       # ZADD's other options are not GEOADD's
          ("GEOADD", "k", "LT", 1, 2, "m"),
          ("GEOADD", "k", "INCR", 1, 2, "m"),
          ("GEOADD", "k", "CH", "XX", "foo", 1, 2, "m"))
    fails(rc, arity("geoadd"), ("GEOADD",), ("GEOADD", "k"), ("GEOADD", "k", 1), ("GEOADD", "k", 1, 2),
          ("GEOADD", "k", "NX", "XX"))
    fails(rc, NOT_FLOAT,
          ("GEOADD", "k", "abc", 0, "m"), ("GEOADD", "k", 0, "abc", "m"),
          ("GEOADD", "k", "nan", 0, "m"), ("GEOADD", "k", 0, "-nan", "m"),
          ("GEOADD", "k", "", 0, "m"), ("GEOADD", "k", " 1", 0, "m"), ("GEOADD", "k", "1 ", 0, "m"),
          ("GEOADD", "k", "1.5.5", 0, "m"),
          ("GEOADD", "k", 1, 2, "ok", "foo", "bar", "bad"))
    # Invalid positions: the exact text, %f-formatted (rounded to 6 decimals).
    for lon, lat in ((200, 100), (180.0000001, 0), (-180.0000001, 0), (0, 85.0511288), (0, -85.0511288),
                     (0, 90), (-181, 45.5), (0, 1e10), (1e300, 0)):
        with raises(lonlat_err(lon, lat)):
            rc.execute_command("GEOADD", "k", lon, lat, "m")
    with raises("invalid longitude,latitude pair 200.000000,100.000000"):
        rc.execute_command("GEOADD", "k", 200, 100, "m")
    with raises("invalid longitude,latitude pair 180.000000,85.051129"):
        rc.execute_command("GEOADD", "k", 180, 85.05112879, "m")
    with raises("invalid longitude,latitude pair inf,0.000000"):
        rc.execute_command("GEOADD", "k", "inf", 0, "m")
    with raises("invalid longitude,latitude pair -inf,0.000000"):
        rc.execute_command("GEOADD", "k", "-inf", 0, "m")
    with raises("invalid longitude,latitude pair 0.000000,inf"):
        rc.execute_command("GEOADD", "k", 0, "+inf", "m")
    # An error anywhere adds nothing, and does not create the key.
    with raises(lonlat_err(200, 100)):
        rc.execute_command("GEOADD", "new", 1, 2, "a", 3, 4, "b", 200, 100, "c")
    with raises(NOT_FLOAT):
        rc.execute_command("GEOADD", "k", 1, 2, "a", 3, "x", "b")
    assert rc.execute_command("EXISTS", "new") == 0
    assert rc.execute_command("ZRANGE", "k", 0, -1) == [b"Palermo", b"Catania"]
    # Option words are members when they stand where a member goes.
    assert rc.execute_command("GEOADD", "k", 1, 2, "NX", 3, 4, "ch") == 2


def test_geoadd_limits_and_number_forms(rc):
    # The valid range is inclusive: longitude -180..180, latitude -85.05112878..85.05112878.
    assert rc.execute_command("GEOADD", "k", 180, 85.05112878, "ne", -180, -85.05112878, "sw",
                              "-0", "0", "zero", "1e1", "2.0", "exp", "0x10", "2", "hex",
                              "-0.5e-7", "+3", "tiny") == 6
    scores = dict(zip(*[iter(rc.execute_command("ZRANGE", "k", 0, -1, "WITHSCORES"))] * 2))
    # (180, max latitude) lands past the 52-bit range: longitude 180 sets bit 52.
    assert scores[b"ne"] == b"13510798882111488"
    assert scores[b"sw"] == b"0"
    assert rc.execute_command("GEOPOS", "k", "ne", "sw", "exp", "hex") == [
        [b"180", b"85.0511287799999991"],
        [b"-179.99999731779098511", b"-85.05112751263942528"],
        [b"10.00000208616256714", b"2.0000001856465488"],
        [b"16.00000172853469849", b"2.0000001856465488"]]
    assert rc.execute_command("GEOHASH", "k", "ne", "sw") == [b"bp05b5048p0", b"00bh0hbj200"]
    assert rc.execute_command("GEODIST", "k", "ne", "sw", "km") == b"18919.8446"


# ---------------------------------------------------------------- GEOPOS / GEOHASH

def test_geopos(rc):
    sicily(rc)
    assert rc.execute_command("GEOPOS", "k", "Palermo", "nope", "Catania", "Palermo") == [
        PALERMO_POS, None, CATANIA_POS, PALERMO_POS]
    assert rc.execute_command("GEOPOS", "k") == []
    assert rc.execute_command("GEOPOS", "missing") == []
    assert rc.execute_command("GEOPOS", "missing", "a", "b") == [None, None]
    fails(rc, arity("geopos"), ("GEOPOS",))


def test_geohash(rc):
    sicily(rc)
    assert rc.execute_command("GEOADD", "k", -5.6, 42.6, "wiki") == 1
    assert rc.execute_command("GEOHASH", "k", "Palermo", "Catania", "nope", "wiki") == [
        b"sqc8b49rny0", b"sqdtr74hyu0", None, b"ezs42e44yx0"]
    assert rc.execute_command("GEOHASH", "k") == []
    assert rc.execute_command("GEOHASH", "missing") == []
    assert rc.execute_command("GEOHASH", "missing", "a", "b") == [None, None]
    fails(rc, arity("geohash"), ("GEOHASH",))


def test_raw_replies_for_missing(server, rc):
    # RESP2: GEOPOS's missing member is a nil *array*, GEOHASH's and GEODIST's a nil bulk.
    sicily(rc)
    with Conn(server) as c:
        assert c.call("GEOPOS", "k", "nope") == b"*1\r\n*-1\r\n"
        assert c.call("GEOPOS", "missing", "nope") == b"*1\r\n*-1\r\n"
        assert c.call("GEOHASH", "k", "nope") == b"*1\r\n$-1\r\n"
        assert c.call("GEODIST", "k", "nope", "Palermo") == b"$-1\r\n"
        assert c.call("GEODIST", "missing", "a", "b", "km") == b"$-1\r\n"
        assert c.call("GEOPOS", "k") == b"*0\r\n"
        assert c.call("GEOSEARCH", "missing", "FROMMEMBER", "x", "BYRADIUS", 1, "km") == b"*0\r\n"
        assert c.call("GEOSEARCHSTORE", "d", "missing", "FROMMEMBER", "x", "BYRADIUS", 1, "km") == b":0\r\n"


def test_non_geo_scores(rc):
    # Any zset can be read as positions: the score's integer part is the 52-bit cell
    # (scores past 2^52 decode clamped into range).
    assert rc.execute_command("ZADD", "z", 0, "a", 1, "b", 4503599627370495, "c", 0.5, "d",
                              4503599627370496, "e", 13510798882111488, "f") == 6
    assert rc.execute_command("GEOPOS", "z", "a", "b", "c", "d", "e", "f") == [
        [b"-179.99999731779098511", b"-85.05112751263942528"],
        [b"-179.99999731779098511", b"-85.05112497791824921"],
        [b"179.99999731779098511", b"85.05112751263942528"],
        [b"-179.99999731779098511", b"-85.05112751263942528"],
        [b"-179.99999731779098511", b"85.0511287799999991"],
        [b"180", b"85.0511287799999991"]]
    assert rc.execute_command("GEOHASH", "z", "a", "b", "c", "d", "e", "f") == [
        b"00bh0hbj200", b"00bh0hbj210", b"zzpgzgpfxz0", b"00bh0hbj200", b"bp05b5048p0", b"bp05b5048p0"]
    assert rc.execute_command("GEODIST", "z", "a", "c") == b"18919844.4481"


# ---------------------------------------------------------------- GEODIST

def test_geodist(rc):
    sicily(rc)
    assert rc.execute_command("GEODIST", "k", "Palermo", "Catania") == b"166274.1516"
    for unit, want in (("m", b"166274.1516"), ("km", b"166.2742"), ("mi", b"103.3182"),
                       ("ft", b"545518.8700"), ("M", b"166274.1516"), ("KM", b"166.2742"),
                       ("Mi", b"103.3182"), ("fT", b"545518.8700")):
        assert rc.execute_command("GEODIST", "k", "Palermo", "Catania", unit) == want
        assert rc.execute_command("GEODIST", "k", "Catania", "Palermo", unit) == want
    assert rc.execute_command("GEODIST", "k", "Palermo", "Palermo") == b"0.0000"
    assert rc.execute_command("GEODIST", "k", "Palermo", "Palermo", "km") == b"0.0000"
    assert rc.execute_command("GEODIST", "k", "Palermo", "nope") is None
    assert rc.execute_command("GEODIST", "k", "nope", "Catania", "km") is None
    assert rc.execute_command("GEODIST", "k", "nope", "nope") is None
    assert rc.execute_command("GEODIST", "missing", "a", "b") is None
    assert rc.execute_command("GEODIST", "missing", "a", "b", "mi") is None
    fails(rc, UNIT, ("GEODIST", "k", "Palermo", "Catania", "parsec"),
          ("GEODIST", "k", "Palermo", "Catania", "kilometers"), ("GEODIST", "k", "Palermo", "Catania", ""),
          ("GEODIST", "missing", "a", "b", "parsec"), ("GEODIST", "k", "nope", "nope", "x"))
    fails(rc, SYNTAX, ("GEODIST", "k", "Palermo", "Catania", "km", "extra"),
          ("GEODIST", "missing", "a", "b", "km", "x"), ("GEODIST", "k", "a", "b", "parsec", "x"))
    fails(rc, arity("geodist"), ("GEODIST", "k", "Palermo"), ("GEODIST", "k"))


def test_geodist_small_and_large(rc):
    assert rc.execute_command("GEOADD", "k", -122.407107, 37.794300, "1", -122.227336, 37.794300, "2",
                              0, 0, "o", 180, 0, "e", -180, 0, "w", 0, 0.000005, "n") == 6
    assert rc.execute_command("GEODIST", "k", "1", "2", "mi") == b"9.8181"
    assert rc.execute_command("GEODIST", "k", "o", "e", "km") == b"20020.7336"
    assert rc.execute_command("GEODIST", "k", "o", "w", "km") == b"20020.7337"
    assert rc.execute_command("GEODIST", "k", "e", "w") == b"0.2983"
    assert rc.execute_command("GEODIST", "k", "o", "n") == b"0.2819"
    assert rc.execute_command("GEODIST", "k", "o", "n", "km") == b"0.0003"


# ---------------------------------------------------------------- GEOSEARCH

def test_geosearch_by_radius_and_box(rc):
    nyc(rc)
    lon, lat = NYC_CENTER
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 3, "km", "ASC") == bl(
        "central park n/q/r", "4545", "union square")
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYBOX", 6, 6, "km", "ASC") == bl(
        "central park n/q/r", "4545", "union square", "lic market")
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYBOX", 6, 6, "km", "WITHDIST",
                              "ASC") == [bl("central park n/q/r", "0.7750"), bl("4545", "2.3651"),
                                         bl("union square", "2.7697"), bl("lic market", "3.1991")]
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMMEMBER", "wtc one", "BYBOX", 14, 14, "km", "ASC") == bl(
        "wtc one", "union square", "4545", "central park n/q/r", "lic market", "q4")
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMMEMBER", "wtc one", "BYRADIUS", 7, "km", "DESC") == bl(
        "lic market", "central park n/q/r", "4545", "union square", "wtc one")
    # Narrow boxes (width x height).
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMMEMBER", "wtc one", "BYBOX", 20, 2, "km") == [b"wtc one"]
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMMEMBER", "wtc one", "BYBOX", 2, 20, "km") == [b"wtc one"]
    # Units, in any case; distances are in the query's unit.
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMMEMBER", "wtc one", "BYRADIUS", 4, "MI", "ASC",
                              "WITHDIST") == [bl("wtc one", "0.0000"), bl("union square", "2.0222"),
                                              bl("4545", "3.8510")]
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMMEMBER", "wtc one", "BYRADIUS", 20000, "Ft", "ASC",
                              "WITHDIST") == [bl("wtc one", "0.0000"), bl("union square", "10677.1505")]
    # Zero radius / box: just the point itself.
    for shape in (("BYRADIUS", 0, "m"), ("BYBOX", 0, 0, "m"), ("BYRADIUS", "-0", "m")):
        assert rc.execute_command("GEOSEARCH", "nyc", "FROMMEMBER", "jfk", *shape, "WITHDIST") == [bl("jfk", "0.0000")]
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", 0, 0, "BYRADIUS", 100, "km") == []
    # An infinite radius (or box) holds everything.
    assert sorted(rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", 0, 0, "BYRADIUS", "inf", "km")) == sorted(
        bl(*NYC[2::3]))
    assert len(rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", 0, 0, "BYBOX", "inf", "inf", "m")) == 7


def test_geosearch_with_options(rc):
    nyc(rc)
    lon, lat = NYC_CENTER
    cp = [b"central park n/q/r", b"0.7750", 1791875761332224, [b"-73.97334784269332886", b"40.76480639569881959"]]
    n4545 = [b"4545", b"2.3651", 1791875796750882, [b"-73.95641237497329712", b"40.74809751381645384"]]
    # WITH* come out in the order DIST, HASH, COORD whatever order they were given in.
    for opts in (("WITHDIST", "WITHHASH", "WITHCOORD"), ("withcoord", "withhash", "withdist"),
                 ("WITHHASH", "WITHCOORD", "WITHDIST", "WITHDIST")):
        assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km", *opts,
                                  "COUNT", 2) == [cp, n4545]
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km", "WITHCOORD",
                              "WITHHASH", "COUNT", 1) == [[cp[0], cp[2], cp[3]]]
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km", "WITHHASH",
                              "COUNT", 1) == [[cp[0], cp[2]]]
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km", "WITHCOORD",
                              "COUNT", 1) == [[cp[0], cp[3]]]
    # COUNT alone sorts ascending; with DESC the farthest come first.
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km", "COUNT", 3) == bl(
        "central park n/q/r", "4545", "union square")
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km", "COUNT", 2,
                              "DESC") == bl("wtc one", "q4")
    # The last of ASC/DESC wins; a second COUNT replaces the first; options in any order.
    assert rc.execute_command("GEOSEARCH", "nyc", "ASC", "COUNT", 5, "BYRADIUS", 10, "km", "DESC", "COUNT", 2,
                              "FROMLONLAT", lon, lat) == bl("wtc one", "q4")
    # A huge COUNT is all of them, sorted.
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km", "COUNT",
                              "9223372036854775807") == bl(
        "central park n/q/r", "4545", "union square", "lic market", "q4", "wtc one")
    # FROMMEMBER / BYRADIUS given twice: the last one counts.
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMMEMBER", "jfk", "FROMMEMBER", "wtc one", "BYRADIUS", 100,
                              "km", "BYRADIUS", 1, "km") == [b"wtc one"]


def test_geosearch_count_any(rc):
    nyc(rc)
    lon, lat = NYC_CENTER
    full = set(rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km"))
    assert len(full) == 6
    got = rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km", "COUNT", 3, "ANY")
    assert len(got) == 3 and len(set(got)) == 3 and set(got) <= full
    # ANY with ASC: whichever three were found first, then sorted by distance.
    got = rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km", "COUNT", 3, "ANY",
                             "ASC", "WITHDIST")
    dists = [float(d) for _, d in got]
    assert len(got) == 3 and dists == sorted(dists) and {m for m, _ in got} <= full
    got = rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km", "ANY", "COUNT", 3,
                             "DESC", "WITHDIST")
    dists = [float(d) for _, d in got]
    assert len(got) == 3 and dists == sorted(dists, reverse=True)
    # More than there are: all of them.
    got = rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 10, "km", "COUNT", 100, "ANY")
    assert sorted(got) == sorted(full)
    assert rc.execute_command("GEOSEARCH", "nyc", "FROMLONLAT", lon, lat, "BYRADIUS", 1, "km", "COUNT", 1, "ANY",
                              "ANY") == [b"central park n/q/r"]


def test_geosearch_errors(rc):
    nyc(rc)
    gs = ("GEOSEARCH", "nyc")
    fm = ("FROMMEMBER", "jfk")
    br = ("BYRADIUS", 1, "km")
    fails(rc, SYNTAX,
          gs + fm + ("FROMLONLAT", 1, 2) + br,          # both centers
          gs + ("FROMLONLAT", 1, 2) + fm + br,
          gs + fm + br + ("BYBOX", 1, 1, "km"),         # both shapes
          gs + fm + ("BYBOX", 1, 1, "km") + br,
          gs + fm + ("BYBOX", 1, 1),                    # missing unit
          gs + fm + br + ("COUNT",),                    # missing count
          gs + fm + br + ("STOREDIST",),                # GEOSEARCHSTORE's option
          gs + fm + br + ("STORE", "d"),                # GEORADIUS's option
          gs + fm + br + ("FOO",),
          gs + fm + br + ("FROMLONLAT", 1))
    fails(rc, from_err("GEOSEARCH"), gs + br + ("ASC", "DESC"), gs + ("ASC", "DESC", "WITHHASH") + br,
          gs + ("ASC", "DESC", "WITHHASH", "WITHDIST", "WITHCOORD"))
    fails(rc, from_err("geosearch"), ("geosearch", "nyc") + br + ("ASC", "DESC"))
    fails(rc, from_err("GeoSearch"), ("GeoSearch", "nyc") + br + ("ASC", "DESC"))
    fails(rc, by_err("GEOSEARCH"), gs + fm + ("ASC", "DESC", "WITHHASH"), gs + ("FROMLONLAT", 1, 2, "ASC", "ASC"))
    fails(rc, by_err("geosearch"), ("geosearch", "nyc") + fm + ("ASC", "DESC", "WITHHASH"))
    fails(rc, NO_MEMBER, gs + ("FROMMEMBER", "nope") + br, gs + ("FROMMEMBER", "nope", "FOO", "BAR", "BAZ"),
          gs + ("FROMMEMBER", "nope", "BYRADIUS", -1, "km"),
          gs + br + ("FROMMEMBER", "ASC", "ASC", "FROMLONLAT", 1, 2))  # an option word taken as the member
    fails(rc, NEG_RADIUS, gs + fm + ("BYRADIUS", -1, "km"), gs + fm + ("BYRADIUS", "-0.001", "parsec"),
          gs + fm + ("BYRADIUS", "-inf", "m"))
    fails(rc, "need numeric radius", gs + fm + ("BYRADIUS", "abc", "km"), gs + fm + ("BYRADIUS", "nan", "km"),
          gs + fm + ("BYRADIUS", "", "km"))
    fails(rc, NEG_BOX, gs + fm + ("BYBOX", -1, 1, "km"), gs + fm + ("BYBOX", 1, -1, "km"),
          gs + fm + ("BYBOX", 1, -1, "parsec"))
    fails(rc, "need numeric width", gs + fm + ("BYBOX", "abc", 1, "km"), gs + fm + ("BYBOX", "abc", -1, "km"),
          gs + fm + ("BYBOX", "abc", "abc", "km"))
    fails(rc, "need numeric height", gs + fm + ("BYBOX", 1, "abc", "km"), gs + fm + ("BYBOX", -1, "abc", "km"))
    fails(rc, UNIT, gs + fm + ("BYRADIUS", 1, "parsec"), gs + fm + ("BYBOX", 1, 1, "yd"))
    fails(rc, COUNT_POS, gs + fm + br + ("COUNT", 0), gs + fm + br + ("COUNT", -1),
          gs + fm + br + ("COUNT", 0, "FROMLONLAT", 200, 100))   # COUNT is parsed first
    fails(rc, NOT_INT, gs + fm + br + ("COUNT", "abc"), gs + fm + br + ("COUNT", "1.5"),
          gs + fm + br + ("COUNT", "99999999999999999999"))
    fails(rc, ANY_COUNT, gs + fm + br + ("ANY",), gs + fm + br + ("ANY", "ASC"))
    fails(rc, lonlat_err(200, 100), gs + ("FROMLONLAT", 200, 100) + br,
          gs + ("FROMLONLAT", 200, 100, "BYRADIUS", 1, "km", "COUNT", 0))
    fails(rc, NOT_FLOAT, gs + ("FROMLONLAT", "abc", 2) + br, gs + ("FROMLONLAT", 1, "x") + br,
          gs + ("FROMLONLAT", 1, "BYRADIUS", 1, "km"))
    # Left to right: the first bad argument is the one reported.
    fails(rc, NEG_RADIUS, gs + fm + ("BYRADIUS", -1, "km", "COUNT", 0))
    fails(rc, COUNT_POS, gs + ("COUNT", 0) + fm + ("BYRADIUS", -1, "km"))
    fails(rc, SYNTAX, gs + fm + br + ("FOO", "COUNT", 0), gs + fm + br + ("ANY", "FOO"))
    fails(rc, arity("geosearch"), ("GEOSEARCH", "nyc"), ("GEOSEARCH", "nyc", "FROMMEMBER", "jfk"),
          ("GEOSEARCH", "nyc", "BYRADIUS", 1, "km"), ("GEOSEARCH", "nyc", "FROMLONLAT", 1, 2),
          ("geosearch", "nyc", "FROMMEMBER", "jfk", "BYRADIUS"))


def test_geosearch_missing_key(rc):
    # No key: the member is not looked up, everything else is still parsed and checked.
    assert rc.execute_command("GEOSEARCH", "missing", "FROMMEMBER", "x", "BYRADIUS", 1, "km") == []
    assert rc.execute_command("GEOSEARCH", "missing", "FROMLONLAT", 1, 2, "BYBOX", 1, 1, "km", "WITHDIST",
                              "COUNT", 3, "ANY") == []
    fails(rc, NEG_RADIUS, ("GEOSEARCH", "missing", "FROMMEMBER", "x", "BYRADIUS", -1, "km"))
    fails(rc, SYNTAX, ("GEOSEARCH", "missing", "FROMMEMBER", "x", "BYRADIUS", 1, "km", "FOO"),
          ("GEOSEARCH", "missing", "FROMMEMBER", "x", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km"))
    fails(rc, lonlat_err(200, 100), ("GEOSEARCH", "missing", "FROMLONLAT", 200, 100, "BYRADIUS", 1, "km"))
    fails(rc, by_err("GEOSEARCH"), ("GEOSEARCH", "missing", "FROMMEMBER", "x", "ASC", "DESC", "WITHHASH"))
    fails(rc, ANY_COUNT, ("GEOSEARCH", "missing", "FROMMEMBER", "x", "BYRADIUS", 1, "km", "ANY"))
    fails(rc, SEARCHSTORE_WITH, ("GEOSEARCHSTORE", "d", "missing", "FROMMEMBER", "x", "BYRADIUS", 1, "km",
                                 "WITHDIST"))
    # GEOSEARCHSTORE from no key: 0, and the destination (of any type) is deleted.
    assert rc.execute_command("GEOSEARCHSTORE", "d", "missing", "FROMMEMBER", "x", "BYRADIUS", 1, "km") == 0
    assert rc.execute_command("SET", "d", "str") == b"OK"
    assert rc.execute_command("GEOSEARCHSTORE", "d", "missing", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km",
                              "STOREDIST") == 0
    assert rc.execute_command("EXISTS", "d") == 0


def test_geosearchstore(rc):
    sicily(rc, "src")
    assert rc.execute_command("GEOSEARCHSTORE", "d", "src", "FROMMEMBER", "Palermo", "BYRADIUS", 200, "km") == 2
    assert rc.execute_command("TYPE", "d") == b"zset"
    assert rc.execute_command("ZRANGE", "d", 0, -1, "WITHSCORES") == bl(
        "Palermo", PALERMO_HASH, "Catania", CATANIA_HASH)
    # STOREDIST: the distance in the query's unit (compared by value: 7.0 and 7.2 print
    # doubles differently).
    assert rc.execute_command("GEOSEARCHSTORE", "d", "src", "FROMMEMBER", "Palermo", "BYRADIUS", 200, "km",
                              "STOREDIST") == 2
    got = rc.execute_command("ZRANGE", "d", 0, -1, "WITHSCORES")
    assert got[0::2] == [b"Palermo", b"Catania"]
    assert float(got[1]) == 0 and got[1] == b"0" and float(got[3]) == 166.27415156960032
    assert rc.execute_command("GEOSEARCHSTORE", "d", "src", "FROMMEMBER", "Palermo", "BYRADIUS", 200, "km",
                              "STOREDIST", "STOREDIST", "COUNT", 1, "DESC") == 1
    assert rc.execute_command("ZRANGE", "d", 0, -1) == [b"Catania"]
    # Overwrites a destination of another type; an empty result deletes it.
    rc.execute_command("SET", "d", "str")
    assert rc.execute_command("GEOSEARCHSTORE", "d", "src", "FROMLONLAT", 15, 37, "BYBOX", 400, 400, "km") == 2
    assert rc.execute_command("ZRANGE", "d", 0, -1) == [b"Palermo", b"Catania"]
    assert rc.execute_command("GEOSEARCHSTORE", "d", "src", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km") == 0
    assert rc.execute_command("EXISTS", "d") == 0
    rc.execute_command("SET", "d", "str")
    assert rc.execute_command("GEOSEARCHSTORE", "d", "src", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km") == 0
    assert rc.execute_command("EXISTS", "d") == 0
    # The source itself as destination.
    assert rc.execute_command("GEOSEARCHSTORE", "src", "src", "FROMMEMBER", "Palermo", "BYRADIUS", 1, "km",
                              "STOREDIST") == 1
    assert rc.execute_command("ZRANGE", "src", 0, -1, "WITHSCORES") == [b"Palermo", b"0"]


def test_geosearchstore_errors(rc):
    sicily(rc, "src")
    base = ("GEOSEARCHSTORE", "d", "src", "FROMMEMBER", "Palermo", "BYRADIUS", 200, "km")
    fails(rc, SEARCHSTORE_WITH, base + ("WITHDIST",), base + ("WITHHASH",), base + ("WITHCOORD",),
          base + ("STOREDIST", "WITHCOORD"))
    fails(rc, SYNTAX, base + ("STORE", "x"), base + ("STOREDIST", "x"), base + ("STORE",))
    fails(rc, from_err("GEOSEARCHSTORE"), ("GEOSEARCHSTORE", "d", "src", "BYRADIUS", 1, "km", "ASC", "ASC"))
    fails(rc, by_err("geosearchstore"), ("geosearchstore", "d", "src", "FROMMEMBER", "Palermo", "ASC", "DESC", "ASC"))
    fails(rc, NO_MEMBER, ("GEOSEARCHSTORE", "d", "src", "FROMMEMBER", "nope", "BYRADIUS", 1, "km"))
    fails(rc, ANY_COUNT, base + ("ANY",))
    fails(rc, arity("geosearchstore"), ("GEOSEARCHSTORE", "d", "src", "FROMMEMBER", "Palermo", "ASC", "DESC"),
          ("GEOSEARCHSTORE", "d", "src"))
    assert rc.execute_command("EXISTS", "d") == 0


# ---------------------------------------------------------------- GEORADIUS / GEORADIUSBYMEMBER

def test_georadius(rc):
    nyc(rc)
    lon, lat = NYC_CENTER
    for cmd in ("GEORADIUS", "GEORADIUS_RO"):
        assert rc.execute_command(cmd, "nyc", lon, lat, 3, "km", "ASC") == bl(
            "central park n/q/r", "4545", "union square")
        assert rc.execute_command(cmd, "nyc", lon, lat, 3, "km", "DESC", "WITHDIST") == [
            bl("union square", "2.7697"), bl("4545", "2.3651"), bl("central park n/q/r", "0.7750")]
        assert rc.execute_command(cmd, "nyc", lon, lat, 10, "km", "COUNT", 3) == bl(
            "central park n/q/r", "4545", "union square")
        assert rc.execute_command(cmd, "nyc", lon, lat, 10, "km", "WITHDIST", "WITHHASH", "WITHCOORD", "COUNT",
                                  1) == [[b"central park n/q/r", b"0.7750", 1791875761332224,
                                          [b"-73.97334784269332886", b"40.76480639569881959"]]]
        assert rc.execute_command(cmd, "nyc", 0, 0, 10, "km") == []
    for cmd in ("GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"):
        assert rc.execute_command(cmd, "nyc", "wtc one", 7, "km", "ASC") == bl(
            "wtc one", "union square", "4545", "central park n/q/r", "lic market")
        assert rc.execute_command(cmd, "nyc", "wtc one", 7, "km", "WITHDIST", "ASC") == [
            bl("wtc one", "0.0000"), bl("union square", "3.2544"), bl("4545", "6.1975"),
            bl("central park n/q/r", "6.7000"), bl("lic market", "6.8969")]
        assert rc.execute_command(cmd, "nyc", "jfk", 1, "m", "WITHCOORD", "WITHHASH", "WITHDIST") == [
            [b"jfk", b"0.0000", 1791895905559723, [b"-73.78581315279006958", b"40.64289898154041936"]]]


def test_georadius_store(rc):
    sicily(rc, "src")
    assert rc.execute_command("GEORADIUS", "src", 15, 37, 200, "km", "STORE", "d") == 2
    assert rc.execute_command("ZRANGE", "d", 0, -1, "WITHSCORES") == bl(
        "Palermo", PALERMO_HASH, "Catania", CATANIA_HASH)
    assert rc.execute_command("GEORADIUS", "src", 15, 37, 200, "km", "STOREDIST", "e") == 2
    got = rc.execute_command("ZRANGE", "e", 0, -1, "WITHSCORES")
    assert got[0::2] == [b"Catania", b"Palermo"]
    assert float(got[1]) == 56.441257870158204 and float(got[3]) == 190.44242984775784
    # Of STORE and STOREDIST the last one counts; the other key is not touched.
    rc.execute_command("DEL", "d", "e")
    assert rc.execute_command("GEORADIUS", "src", 15, 37, 200, "km", "STORE", "d", "STOREDIST", "e") == 2
    assert rc.execute_command("EXISTS", "d") == 0 and rc.execute_command("ZCARD", "e") == 2
    assert float(rc.execute_command("ZSCORE", "e", "Catania")) == 56.441257870158204
    assert rc.execute_command("GEORADIUS", "src", 15, 37, 200, "km", "STOREDIST", "e", "STORE", "d") == 2
    assert rc.execute_command("ZSCORE", "d", "Catania") == str(CATANIA_HASH).encode()
    assert rc.execute_command("GEORADIUS", "src", 15, 37, 200, "km", "COUNT", 1, "STOREDIST", "f", "DESC") == 1
    assert rc.execute_command("ZRANGE", "f", 0, -1) == [b"Palermo"]
    assert rc.execute_command("GEORADIUSBYMEMBER", "src", "Palermo", 500, "km", "STORE", "g") == 2
    assert rc.execute_command("ZRANGE", "g", 0, -1) == [b"Palermo", b"Catania"]
    assert rc.execute_command("GEORADIUSBYMEMBER", "src", "Catania", 500, "km", "STOREDIST", "g") == 2
    got = rc.execute_command("ZRANGE", "g", 0, -1, "WITHSCORES")
    assert got[0::2] == [b"Catania", b"Palermo"] and got[1] == b"0" and 166 < float(got[3]) < 167
    # Empty result: 0 and the destination deleted, whatever its type.
    rc.execute_command("SET", "g", "str")
    assert rc.execute_command("GEORADIUS", "src", 15, 37, 1, "km", "STORE", "g") == 0
    assert rc.execute_command("EXISTS", "g") == 0
    make_list(rc, "g", "x")
    assert rc.execute_command("GEORADIUSBYMEMBER", "src", "Palermo", 1, "m", "STOREDIST", "g", "COUNT", 5) == 1
    assert rc.execute_command("ZRANGE", "g", 0, -1, "WITHSCORES") == [b"Palermo", b"0"]


def test_georadius_errors(rc):
    sicily(rc, "src")
    fails(rc, STORE_WITH,
          ("GEORADIUS", "src", 15, 37, 200, "km", "STORE", "d", "WITHDIST"),
          ("GEORADIUS", "src", 15, 37, 200, "km", "WITHHASH", "STOREDIST", "d"),
          ("georadius", "src", 15, 37, 200, "km", "WITHCOORD", "STORE", "d"),
          ("GEORADIUSBYMEMBER", "src", "Palermo", 200, "km", "STORE", "d", "WITHDIST"),
          ("GEORADIUSBYMEMBER", "missing", "Palermo", -1, "parsec", "WITHDIST", "STORE", "d"))
    # The _RO forms do not know STORE / STOREDIST.
    fails(rc, SYNTAX,
          ("GEORADIUS_RO", "src", 15, 37, 200, "km", "STORE", "d"),
          ("GEORADIUS_RO", "src", 15, 37, 200, "km", "STOREDIST", "d"),
          ("GEORADIUS_RO", "src", 15, 37, 200, "km", "WITHCOORD", "STORE", "d"),
          ("GEORADIUSBYMEMBER_RO", "src", "Palermo", 200, "km", "STORE", "d"),
          ("GEORADIUSBYMEMBER_RO", "src", "Palermo", 200, "km", "STOREDIST", "d"),
          ("GEORADIUS", "src", 15, 37, 200, "km", "STORE"),
          ("GEORADIUS", "src", 15, 37, 200, "km", "STOREDIST"),
          ("GEORADIUS", "src", 15, 37, 200, "km", "COUNT"),
          ("GEORADIUS", "src", 15, 37, 200, "km", "FROMMEMBER", "Palermo"),
          ("GEORADIUS", "src", 15, 37, 200, "km", "BYRADIUS", 1, "km"),
          ("GEORADIUS", "src", 15, 37, 200, "km", "FOO"),
          ("GEORADIUSBYMEMBER", "missing", "nope", -1, "parsec", "FOO"))
    assert rc.execute_command("EXISTS", "d") == 0
    fails(rc, lonlat_err(200, 100), ("GEORADIUS", "src", 200, 100, 1, "km"),
          ("GEORADIUS_RO", "missing", 200, 100, 1, "km"))
    fails(rc, NOT_FLOAT, ("GEORADIUS", "src", "x", 37, 1, "km"))
    fails(rc, NEG_RADIUS, ("GEORADIUS", "src", 15, 37, -1, "km"), ("GEORADIUS", "missing", 1, 1, -1, "km"),
          ("GEORADIUSBYMEMBER", "src", "Palermo", -1, "km"))
    fails(rc, "need numeric radius", ("GEORADIUS", "src", 15, 37, "x", "km"),
          ("GEORADIUSBYMEMBER_RO", "src", "Palermo", "x", "km"))
    fails(rc, UNIT, ("GEORADIUS", "src", 15, 37, 1, "parsec"), ("GEORADIUSBYMEMBER", "src", "Palermo", 1, "parsec"))
    fails(rc, COUNT_POS, ("GEORADIUS", "src", 15, 37, 1, "km", "COUNT", 0))
    fails(rc, ANY_COUNT, ("GEORADIUS", "src", 15, 37, 1, "km", "ANY"),
          ("GEORADIUS", "src", 15, 37, 1, "km", "STORE", "d", "ANY"))
    # A missing member is reported before the radius is looked at.
    fails(rc, NO_MEMBER, ("GEORADIUSBYMEMBER", "src", "nope", 1, "km"),
          ("GEORADIUSBYMEMBER", "src", "nope", -1, "parsec"), ("GEORADIUSBYMEMBER_RO", "src", "nope", 1, "km"))
    for cmd, n in (("georadius", 5), ("georadius_ro", 5), ("georadiusbymember", 4), ("georadiusbymember_ro", 4)):
        fails(rc, arity(cmd), (cmd.upper(), "src", 15, 37, 1)[:n], (cmd.upper(), "src"))


def test_georadius_missing_key(rc):
    for cmd in ("GEORADIUS", "GEORADIUS_RO"):
        assert rc.execute_command(cmd, "missing", 1, 1, 1, "km", "WITHDIST", "COUNT", 1) == []
    assert rc.execute_command("GEORADIUS", "missing", 1, 1, 1, "km", "STORE", "d") == 0
    # GEORADIUSBYMEMBER without a key looks at neither the member nor the radius.
    for cmd in ("GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"):
        assert rc.execute_command(cmd, "missing", "nope", 1, "km") == []
        assert rc.execute_command(cmd, "missing", "nope", -1, "parsec") == []
    rc.execute_command("SET", "d", "str")
    assert rc.execute_command("GEORADIUSBYMEMBER", "missing", "nope", -1, "parsec", "STORE", "d") == 0
    assert rc.execute_command("EXISTS", "d") == 0
    rc.execute_command("SET", "d", "str")
    assert rc.execute_command("GEORADIUS", "missing", 1, 1, 1, "km", "STOREDIST", "d") == 0
    assert rc.execute_command("EXISTS", "d") == 0


# ---------------------------------------------------------------- types, keyspace

def test_wrongtype(rc):
    rc.execute_command("SET", "s", "str")
    make_list(rc, "l", "x")
    for key in ("s", "l"):
        fails(rc, WRONGTYPE,
              ("GEOADD", key, 1, 1, "m"),
              ("GEOADD", key, "NX", 1, 1, "m"),
              ("GEODIST", key, "a", "b"),
              ("GEODIST", key, "a", "b", "km"),
              ("GEOHASH", key, "a"), ("GEOHASH", key),
              ("GEOPOS", key, "a"), ("GEOPOS", key),
              ("GEORADIUS", key, 15, 37, 1, "km"),
              ("GEORADIUS", key, 200, 100, 1, "km"),        # the type before anything else
              ("GEORADIUS", key, 15, 37, 1, "km", "STORE", "d"),
              ("GEORADIUS_RO", key, 15, 37, 1, "km"),
              ("GEORADIUSBYMEMBER", key, "x", 1, "km"),
              ("GEORADIUSBYMEMBER", key, "x", 1, "km", "FOO"),
              ("GEORADIUSBYMEMBER_RO", key, "x", -1, "km"),
              ("GEOSEARCH", key, "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km"),
              ("GEOSEARCH", key, "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km", "FOO"),
              ("GEOSEARCH", key, "FROMMEMBER", "x", "ASC", "DESC", "WITHHASH"),
              ("GEOSEARCHSTORE", "d", key, "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km"))
    # GEODIST checks the unit and its argument count before the key.
    fails(rc, UNIT, ("GEODIST", "s", "a", "b", "parsec"))
    fails(rc, SYNTAX, ("GEODIST", "s", "a", "b", "km", "x"))
    # GEOADD's syntax errors come before the key is looked at.
    fails(rc, SYNTAX, ("GEOADD", "s", 1, 2, "m", 3), ("GEOADD", "s", "NX", "XX", 1, 2, "m"))
    fails(rc, lonlat_err(200, 100), ("GEOADD", "s", 200, 100, "m"))
    # A destination is overwritten whatever its type; a source of another type is an error.
    sicily(rc, "src")
    assert rc.execute_command("GEOSEARCHSTORE", "s", "src", "FROMMEMBER", "Palermo", "BYRADIUS", 1, "km") == 1
    assert rc.execute_command("TYPE", "s") == b"zset"
    assert rc.execute_command("GEORADIUS", "src", 15, 37, 200, "km", "STORE", "l") == 2
    assert rc.execute_command("TYPE", "l") == b"zset"
    assert rc.execute_command("EXISTS", "d") == 0


def test_geo_set_is_a_sorted_set(rc):
    sicily(rc)
    assert rc.execute_command("ZREM", "k", "Palermo") == 1
    assert rc.execute_command("GEOPOS", "k", "Palermo", "Catania") == [None, CATANIA_POS]
    assert rc.execute_command("ZADD", "k", PALERMO_HASH, "p2") == 1
    assert rc.execute_command("GEOPOS", "k", "p2") == [PALERMO_POS]
    assert rc.execute_command("GEODIST", "k", "p2", "Catania", "km") == b"166.2742"
    assert rc.execute_command("GEOSEARCH", "k", "FROMMEMBER", "p2", "BYRADIUS", 200, "km", "ASC") == [
        b"p2", b"Catania"]
    assert rc.execute_command("ZREM", "k", "p2", "Catania") == 2
    assert rc.execute_command("EXISTS", "k") == 0
    # Binary-safe member names, the empty one included.
    names = [b"", b"with space", b"\x00\xff\r\n", b"x" * 300]
    args = []
    for i, n in enumerate(names):
        args += [i, i, n]
    assert rc.execute_command("GEOADD", "k", *args) == 4
    assert rc.execute_command("GEOSEARCH", "k", "FROMMEMBER", b"", "BYRADIUS", 1000, "km", "ASC") == names
    assert rc.execute_command("GEOHASH", "k", b"\x00\xff\r\n") == [b"s037ms06g70"]


def test_command_info(rc):
    want = {
        "geoadd": (-5, [b"write", b"denyoom"], [1, 1, 1]),
        "geodist": (-4, [b"readonly"], [1, 1, 1]),
        "geohash": (-2, [b"readonly"], [1, 1, 1]),
        "geopos": (-2, [b"readonly"], [1, 1, 1]),
        "georadius": (-6, [b"write", b"denyoom", b"movablekeys"], [1, 1, 1]),
        "georadius_ro": (-6, [b"readonly"], [1, 1, 1]),
        "georadiusbymember": (-5, [b"write", b"denyoom", b"movablekeys"], [1, 1, 1]),
        "georadiusbymember_ro": (-5, [b"readonly"], [1, 1, 1]),
        "geosearch": (-7, [b"readonly"], [1, 1, 1]),
        "geosearchstore": (-8, [b"write", b"denyoom"], [1, 2, 1]),
    }
    infos = rc.execute_command("COMMAND", "INFO", *want)
    for (name, (ar, flags, keys)), info in zip(want.items(), infos):
        assert info is not None, name
        assert info[0] == name.encode() and info[1] == ar and info[2] == flags and info[3:6] == keys, info
        assert info[6] == [b"@write" if b"write" in flags else b"@read", b"@geo", b"@slow"]
    getkeys = lambda *cmd: rc.execute_command("COMMAND", "GETKEYS", *cmd)  # noqa: E731
    assert getkeys("GEORADIUS", "k", 0, 0, 1, "km", "STORE", "d") == [b"k", b"d"]
    assert getkeys("GEORADIUS", "k", 0, 0, 1, "km", "STOREDIST", "d") == [b"k", b"d"]
    assert getkeys("GEORADIUS", "k", 0, 0, 1, "km") == [b"k"]
    assert getkeys("GEORADIUSBYMEMBER", "k", "m", 1, "km", "WITHDIST", "STORE", "d") == [b"k", b"d"]
    assert getkeys("GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", 1, "km") == [b"d", b"s"]


# ---------------------------------------------------------------- edges of the map

def test_search_across_the_antimeridian_and_poles(rc):
    assert rc.execute_command("GEOADD", "k", 179.5, 36, "p1", -179.5, 36, "p2") == 2
    assert rc.execute_command("GEOSEARCH", "k", "FROMLONLAT", 179, 37, "BYBOX", 400, 400, "km", "ASC") == [
        b"p1", b"p2"]
    assert rc.execute_command("GEOSEARCH", "k", "FROMLONLAT", -179, 37, "BYBOX", 400, 400, "km", "ASC") == [
        b"p2", b"p1"]
    assert rc.execute_command("GEOSEARCH", "k", "FROMLONLAT", 179.9999, 36, "BYRADIUS", 50, "km", "ASC") == [
        b"p1", b"p2"]
    # Redis's quirks at longitude 180 exactly: a search centered there does not reach across
    # the antimeridian (one centered at -180 does) ...
    assert rc.execute_command("GEORADIUS", "k", 180, 36, 50, "km", "ASC") == [b"p1"]
    assert rc.execute_command("GEOSEARCH", "k", "FROMLONLAT", 180, 36, "BYBOX", 100, 100, "km") == [b"p1"]
    assert rc.execute_command("GEORADIUS", "k", -180, 36, 50, "km", "ASC") == [b"p2", b"p1"]
    # ... and a point at longitude 180 has a score past 2^52 (bit 52 set), outside every
    # search box except those of searches centered at longitude 180.
    assert rc.execute_command("GEOADD", "k", 0, 0, "o", 180, 0, "e", -180, 0, "w") == 3
    assert rc.execute_command("ZSCORE", "k", "e") == b"10133099161583616"
    assert rc.execute_command("GEOSEARCH", "k", "FROMLONLAT", 0, 0, "BYRADIUS", "inf", "km", "ASC") == [
        b"o", b"p1", b"p2", b"w"]
    assert rc.execute_command("GEOSEARCH", "k", "FROMLONLAT", 90, 0, "BYRADIUS", 20000, "km", "ASC") == [
        b"p1", b"o", b"w", b"p2"]
    assert rc.execute_command("GEOSEARCH", "k", "FROMLONLAT", 180, 0, "BYRADIUS", 1, "km", "WITHDIST") == [
        [b"e", b"0.0001"]]
    assert rc.execute_command("GEOSEARCH", "k", "FROMMEMBER", "e", "BYRADIUS", 1, "km", "WITHDIST") == [
        [b"e", b"0.0000"]]
    assert rc.execute_command("GEOSEARCH", "k", "FROMLONLAT", -180, 0, "BYRADIUS", 1, "km", "WITHDIST") == [
        [b"w", b"0.0003"]]
    assert rc.execute_command("GEOSEARCH", "k", "FROMLONLAT", 179.99999, 0, "BYRADIUS", 10, "km",
                              "WITHDIST") == [[b"w", b"0.0014"]]
    assert rc.execute_command("GEODIST", "k", "e", "w") == b"0.2983"
    rc.execute_command("DEL", "k")
    # Redis's regression cases (geo.tcl): the search boxes must reach across the pole.
    assert rc.execute_command("GEOADD", "k", 45, 65, "n1", -135, 85.05, "n2") == 2
    assert rc.execute_command("GEORADIUSBYMEMBER", "k", "n1", 5009431, "m") == [b"n1", b"n2"]
    rc.execute_command("DEL", "k")
    rc.execute_command("GEOADD", "k", -0.15307903289794921875, 85, "n1", 0.3515625, 85.00019260486917005437, "n2")
    assert rc.execute_command("GEORADIUSBYMEMBER", "k", "n1", 4891.94, "m") == [b"n1", b"n2"]
    rc.execute_command("DEL", "k")
    rc.execute_command("GEOADD", "k", -4.95211958885192871094, 85, "n3", 11.25, 85.0511, "n4")
    assert rc.execute_command("GEORADIUSBYMEMBER", "k", "n3", 156544, "m") == [b"n3", b"n4"]
    rc.execute_command("DEL", "k")
    rc.execute_command("GEOADD", "k", -45, 65.50900022111811438208, "n5", 90, 85.0511, "n6")
    assert rc.execute_command("GEORADIUSBYMEMBER", "k", "n5", 5009431, "m") == [b"n5", b"n6"]
    # Box corners (geo.tcl's corner test): only the points inside a 400 km square.
    rc.execute_command("DEL", "k")
    rc.execute_command("GEOADD", "k", 12.758489, 38.788135, "edge1", 17.241510, 38.788135, "edge2",
                       17.250000, 35.202000, "edge3", 12.750000, 35.202000, "edge4",
                       12.748489955781654, 37, "edge5", 15, 38.798135872540925, "edge6",
                       17.251510044218346, 37, "edge7", 15, 35.201864127459075, "edge8",
                       12.692799634687903, 38.798135872540925, "corner1",
                       12.692799634687903, 38.798135872540925, "corner2",
                       17.200560937451133, 35.201864127459075, "corner3",
                       12.799439062548865, 35.201864127459075, "corner4")
    assert sorted(rc.execute_command("GEOSEARCH", "k", "FROMLONLAT", 15, 37, "BYBOX", 400, 400, "km")) == [
        b"edge1", b"edge2", b"edge5", b"edge7"]
    # geo.tcl's small-distance case.
    rc.execute_command("DEL", "k")
    rc.execute_command("GEOADD", "k", -122.407107, 37.794300, "1", -122.227336, 37.794300, "2")
    assert rc.execute_command("GEORADIUS", "k", -122.407107, 37.794300, 30, "mi", "ASC", "WITHDIST") == [
        [b"1", b"0.0001"], [b"2", b"9.8182"]]


# ---------------------------------------------------------------- RESP3

def test_resp3_shapes(server, rc3):
    sicily(rc3)
    with Conn(server) as c:
        c.call("HELLO", "3")
        # Distances stay bulk strings (4 decimals); coordinates become doubles.
        assert c.call("GEODIST", "k", "Palermo", "Catania") == b"$11\r\n166274.1516\r\n"
        assert c.call("GEODIST", "k", "Palermo", "nope") == b"_\r\n"
        assert c.call("GEODIST", "missing", "a", "b") == b"_\r\n"
        assert c.call("GEOPOS", "k", "Palermo", "nope") == (
            b"*2\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n_\r\n")
        assert c.call("GEOPOS", "missing", "a") == b"*1\r\n_\r\n"
        assert c.call("GEOHASH", "k", "Palermo", "nope") == b"*2\r\n$11\r\nsqc8b49rny0\r\n_\r\n"
        assert c.call("GEOSEARCH", "k", "FROMMEMBER", "Palermo", "BYRADIUS", 200, "km", "WITHDIST", "WITHHASH",
                      "WITHCOORD", "ASC") == (
            b"*2\r\n*4\r\n$7\r\nPalermo\r\n$6\r\n0.0000\r\n:3479099956230698\r\n"
            b"*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n"
            b"*4\r\n$7\r\nCatania\r\n$8\r\n166.2742\r\n:3479447370796909\r\n"
            b"*2\r\n,15.08726745843887329\r\n,37.50266842333162032\r\n")
        assert c.call("GEOSEARCH", "k", "FROMMEMBER", "Palermo", "BYRADIUS", 200, "km", "DESC") == (
            b"*2\r\n$7\r\nCatania\r\n$7\r\nPalermo\r\n")
        assert c.call("GEORADIUS", "missing", 1, 1, 1, "km") == b"*0\r\n"
        assert c.call("GEOSEARCHSTORE", "d", "k", "FROMMEMBER", "Palermo", "BYRADIUS", 200, "km") == b":2\r\n"
        assert c.call("GEOADD", "k", 180, 85.05112878, "ne") == b":1\r\n"
        assert c.call("GEOPOS", "k", "ne") == b"*1\r\n*2\r\n,180\r\n,85.0511287799999991\r\n"
    # Through redis-py: the coordinates are floats, the distance a bytes string.
    assert rc3.execute_command("GEODIST", "k", "Palermo", "Catania", "km") == b"166.2742"
    assert rc3.execute_command("GEOPOS", "k", "Catania", "nope") == [
        [15.08726745843887329, 37.50266842333162032], None]


# ---------------------------------------------------------------- stores across shards

@pytest.mark.parametrize("src,dst", [(s, d) for s in SPREAD[:2] for d in SPREAD if d != s])
def test_store_across_shards(rc, src, dst):
    nyc(rc, src)
    lon, lat = NYC_CENTER
    rc.execute_command("SET", dst, "old")
    assert rc.execute_command("GEOSEARCHSTORE", dst, src, "FROMLONLAT", lon, lat, "BYRADIUS", 3, "km") == 3
    assert rc.execute_command("ZRANGE", dst, 0, -1, "WITHSCORES") == bl(
        "union square", 1791875485187452, "central park n/q/r", 1791875761332224, "4545", 1791875796750882)
    assert rc.execute_command("GEOSEARCHSTORE", dst, src, "FROMMEMBER", "jfk", "BYBOX", 1, 1, "km",
                              "STOREDIST") == 1
    assert rc.execute_command("ZRANGE", dst, 0, -1, "WITHSCORES") == [b"jfk", b"0"]
    assert rc.execute_command("GEORADIUS", src, lon, lat, 3, "km", "STORE", dst, "COUNT", 2) == 2
    assert rc.execute_command("ZRANGE", dst, 0, -1) == [b"central park n/q/r", b"4545"]
    assert rc.execute_command("GEORADIUSBYMEMBER", src, "wtc one", 7, "km", "STOREDIST", dst, "DESC",
                              "COUNT", 1) == 1
    got = rc.execute_command("ZRANGE", dst, 0, -1, "WITHSCORES")
    assert got[0] == b"lic market" and float(got[1]) == pytest.approx(6.8969, abs=1e-4)
    # An empty result deletes the destination on its own shard.
    assert rc.execute_command("GEOSEARCHSTORE", dst, src, "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km") == 0
    assert rc.execute_command("EXISTS", dst) == 0
    rc.execute_command("SET", dst, "old")
    assert rc.execute_command("GEORADIUS", src, 0, 0, 1, "km", "STORE", dst) == 0
    assert rc.execute_command("EXISTS", dst) == 0
    # The source is unchanged throughout.
    assert rc.execute_command("ZCARD", src) == 7


def test_store_keyword_twice_across_shards(rc):
    # STORE and STOREDIST may repeat; the last one is the destination, the others are
    # not touched (COMMAND GETKEYS reports only the first: a router must not trust it).
    nyc(rc, "a")
    lon, lat = NYC_CENTER
    for other in ("b", "c"):
        rc.execute_command("SET", other, "keep")
    assert rc.execute_command("GEORADIUS", "a", lon, lat, 3, "km", "STORE", "b", "STORE", "x") == 3
    assert rc.execute_command("ZCARD", "x") == 3
    assert rc.execute_command("GEORADIUS", "a", lon, lat, 3, "km", "STORE", "c", "STOREDIST", "y") == 3
    assert float(rc.execute_command("ZSCORE", "y", "4545")) == pytest.approx(2.3651, abs=1e-4)
    assert rc.execute_command("GEORADIUSBYMEMBER", "a", "jfk", 1, "km", "STOREDIST", "b", "STORE", "c",
                              "STORE", "y") == 1
    assert rc.execute_command("ZRANGE", "y", 0, -1) == [b"jfk"]
    assert rc.execute_command("MGET", "b", "c") == [b"keep", b"keep"]
    assert rc.execute_command("ZCARD", "a") == 7


@skip_72
def test_storedist_score_text_72(rc):
    # Redis 7.2 prints a stored distance in its shortest form (fpconv_dtoa): decimals up to
    # 1e4, then scientific notation when digits follow; integers as integers.
    sicily(rc, "src")
    assert rc.execute_command("GEORADIUS", "src", 15, 37, 200, "km", "STOREDIST", "d") == 2
    assert rc.execute_command("ZRANGE", "d", 0, -1, "WITHSCORES") == [
        b"Catania", b"56.4412578701582", b"Palermo", b"190.44242984775784"]
    assert rc.execute_command("GEORADIUS", "src", 15, 37, 200000, "m", "STOREDIST", "d") == 2
    # (7.0: 56441.257870158202 and 190442.42984775783)
    assert rc.execute_command("ZSCORE", "d", "Catania") == b"5.64412578701582e+4"
    assert rc.execute_command("ZSCORE", "d", "Palermo") == b"1.9044242984775783e+5"
    assert rc.execute_command("GEOSEARCHSTORE", "d", "src", "FROMMEMBER", "Palermo", "BYRADIUS", 200, "km",
                              "STOREDIST") == 2
    assert rc.execute_command("ZRANGE", "d", 0, -1, "WITHSCORES") == [
        b"Palermo", b"0", b"Catania", b"166.27415156960032"]


# ---------------------------------------------------------------- differential run

def parse(raw):
    """A RESP2/RESP3 reply (bytes) as a tree that keeps every distinction the bytes make:
    bulk strings are bytes, integers ints, arrays lists, the other types tagged tuples."""
    def one(i):
        j = raw.index(b"\r\n", i)
        t, line = raw[i:i + 1], raw[i + 1:j]
        i = j + 2
        if t == b"$":
            n = int(line)
            if n < 0:
                return ("nil-bulk",), i
            return raw[i:i + n], i + n + 2
        if t == b"*":
            n = int(line)
            if n < 0:
                return ("nil-array",), i
            items = []
            for _ in range(n):
                x, i = one(i)
                items.append(x)
            return items, i
        if t == b":":
            return int(line), i
        if t in b"+-,_":
            return ({b"+": "simple", b"-": "error", b",": "double", b"_": "null"}[t], line), i
        raise AssertionError("unexpected reply %r" % raw[:100])
    tree, end = one(0)
    assert end == len(raw), raw
    return tree


def freeze(x):
    return tuple(freeze(y) for y in x) if isinstance(x, list) else x


def is_error(tree):
    return isinstance(tree, tuple) and tree[:1] == ("error",)


def member_of(item):
    return item if isinstance(item, bytes) else item[0]


def zpairs(tree):
    """ZRANGE … WITHSCORES as [(member, score text)], from RESP2 (flat) or RESP3 (pairs)."""
    if tree and isinstance(tree[0], list):
        return [(m, s[1] if isinstance(s, tuple) else s) for m, s in tree]
    return list(zip(tree[0::2], tree[1::2]))


UNITS = {"m": 1.0, "km": 1000.0, "mi": 1609.34, "ft": 0.3048}
LAT_MAX = 85.05112878
CITY = (2.3522, 48.8566)  # Paris
SRC = "a"


class Query:
    """One random search: center, shape, options; renders itself as each command's syntax."""

    def __init__(self, d, radius_only=False, store=False):
        rnd = d.rnd
        if rnd.random() < 0.5:
            self.center = ["FROMMEMBER", d.center_member()]
        else:
            self.center = ["FROMLONLAT", *d.point()]
        unit = d.unit()
        if radius_only or rnd.random() < 0.5:
            self.shape = ["BYRADIUS", d.distance(unit), unit]
        else:
            self.shape = ["BYBOX", d.distance(unit), d.distance(unit), unit]
        self.groups = []   # option groups, each a list of tokens
        self.withs = []
        if not store:
            for w in ("WITHCOORD", "WITHDIST", "WITHHASH"):
                if rnd.random() < 0.35:
                    self.withs.append(d.word(w))
                    self.groups.append([self.withs[-1]])
        self.sort = rnd.choice((None, None, "ASC", "DESC"))
        if self.sort:
            self.groups.append([d.word(self.sort)])
        self.count, self.any = 0, False
        if rnd.random() < 0.45:
            self.count = rnd.choice((1, 1, 2, 3, 5, 10, 30, 100, 1000))
            self.any = rnd.random() < 0.35
            self.groups.append([d.word("COUNT"), str(self.count)] + ([d.word("ANY")] if self.any else []))
        r = rnd.random()
        if r < 0.02:  # errors: parsed where they stand, whatever else is there
            self.groups.append([d.word("COUNT"), rnd.choice(("0", "-1", "x"))])
        elif r < 0.04 and not self.count:
            self.groups.append([d.word("ANY")])
        rnd.shuffle(self.groups)
        self.where = rnd.randint(0, len(self.groups))  # where GEOSEARCH's FROM/BY go
        self.center[0], self.shape[0] = d.word(self.center[0]), d.word(self.shape[0])

    def options(self):
        return [t for g in self.groups for t in g]

    def geosearch(self, cmd="GEOSEARCH"):
        g = self.groups[:self.where] + [self.center, self.shape] + self.groups[self.where:]
        return [cmd, SRC] + [t for x in g for t in x]

    def geosearchstore(self, dst, storedist, rnd):
        args = self.geosearch("GEOSEARCHSTORE")
        args.insert(1, dst)
        if storedist:
            args.insert(rnd.randint(3, len(args)), "STOREDIST")
        return args

    def georadius(self, ro=False):
        if self.center[0].upper() == "FROMMEMBER":
            head = ["GEORADIUSBYMEMBER", SRC, self.center[1]]
        else:
            head = ["GEORADIUS", SRC, *self.center[1:]]
        if ro:
            head[0] += "_RO"
        return head + self.shape[1:] + self.options()

    def full(self):
        """The same search's whole result, sorted (for checking COUNT … ANY)."""
        return ["GEOSEARCH", SRC, *self.center, *self.shape, *self.withs, "ASC"]

    def distances(self):
        """Stores the whole result with its distances (on the reference only)."""
        return ["GEOSEARCHSTORE", "{dist}", SRC, *self.center, *self.shape, "STOREDIST"]


class Diff:
    """Two connections (server under test, reference redis-server) and the comparisons.

    Replies are compared exactly, except:
    - a search without ASC/DESC and without COUNT: as a multiset (Redis's order is its scan
      order over the geohash boxes);
    - a sorted search (ASC, DESC, or COUNT without ANY, which implies ASC): exactly, except
      that results at the very same distance (as the reference computes it: members in one
      52-bit cell, or rarely two cells alike) may come in any order among themselves, and
      where COUNT cuts through such a run, any of its members may be kept;
    - COUNT n ANY: as many results, each one of the search's whole result (same WITH*), and
      with ASC/DESC in distance order;
    - a stored result, read back with ZRANGE WITHSCORES: as the search's (the same members,
      except in a run COUNT cut), scores exactly, STOREDIST's distances as doubles (Redis 7.0
      prints them with %.17g, 7.2 in the shortest form).
    """

    def __init__(self, sub, ref, rnd):
        self.sub, self.ref, self.rnd = sub, ref, rnd
        self.score = {}      # member -> 52-bit score (int), from the reference
        self.members = []

    def both(self, *args):
        return self.sub.call(*args), self.ref.call(*args)

    def same(self, *args):
        a, b = self.both(*args)
        assert a == b, "%r\n  server: %r\n  redis:  %r" % (args, a[:3000], b[:3000])
        return parse(b)

    def load_scores(self, key):
        pairs = zpairs(self.same("ZRANGE", key, 0, -1, "WITHSCORES"))
        self.score = {m: int(s) for m, s in pairs}
        self.members = sorted(self.score)

    def dist_map(self, q):
        """member -> distance (a double, in the query's unit) for the whole result, as the
        reference computes it."""
        assert not is_error(parse(self.ref.call(*q.distances())))
        pairs = zpairs(parse(self.ref.call("ZRANGE", "{dist}", 0, -1, "WITHSCORES")))
        self.ref.call("DEL", "{dist}")
        return {m: float(s) for m, s in pairs}

    @staticmethod
    def runs(items, dist):
        """Consecutive runs of items at the same distance: [(distance, [items])]."""
        out = []
        for it in items:
            d = dist[member_of(it)]
            if out and out[-1][0] == d:
                out[-1][1].append(it)
            else:
                out.append((d, [it]))
        return out

    def check_sorted(self, args, q, sub, ref, count):
        msg = "%r\n  server: %r\n  redis:  %r" % (args, sub[:50], ref[:50])
        dist = self.dist_map(q)
        assert all(member_of(x) in dist for x in sub), msg
        ts, tr = self.runs(sub, dist), self.runs(ref, dist)
        assert [(d, len(g)) for d, g in ts] == [(d, len(g)) for d, g in tr], msg
        sizes = {}
        for v in dist.values():
            sizes[v] = sizes.get(v, 0) + 1
        for k, ((d, a), (_, b)) in enumerate(zip(ts, tr)):
            if count and k == len(ts) - 1 and len(a) < sizes[d]:
                # COUNT cut this run: any of its members, once each; the same WITH* fields
                # where the run is one 52-bit cell (same distance, hash and coordinates).
                assert len({member_of(x) for x in a}) == len(a), msg
                if len({self.score[member_of(x)] for x in a + b}) == 1 and not isinstance(a[0], bytes):
                    assert sorted(freeze(x[1:]) for x in a) == sorted(freeze(x[1:]) for x in b), msg
            else:
                assert sorted(map(freeze, a)) == sorted(map(freeze, b)), msg

    def check_any(self, args, q, sub, ref):
        msg = "%r\n  server: %r\n  redis:  %r" % (args, sub[:50], ref[:50])
        full = self.same_sorted(q.full(), q)
        assert len(sub) == len(ref) == min(q.count, len(full)), msg
        known = {freeze(x) for x in full}
        dist = self.dist_map(q) if q.sort else None
        for side in (sub, ref):
            assert len({member_of(x) for x in side}) == len(side), msg
            assert all(freeze(x) in known for x in side), msg + "\n  whole result: %r" % full[:50]
            if dist:
                ds = [dist[member_of(x)] for x in side]
                assert ds == sorted(ds, reverse=q.sort.upper() == "DESC"), msg

    def same_sorted(self, args, q):
        a, b = self.both(*args)
        sub, ref = parse(a), parse(b)
        if a != b:
            assert isinstance(ref, list) and isinstance(sub, list), "%r\n  server: %r\n  redis:  %r" % (
                args, a[:300], b[:300])
            self.check_sorted(args, q, sub, ref, 0)
        return ref

    def search(self, args, q):
        """Compare one search that replies its results."""
        a, b = self.both(*args)
        sub, ref = parse(a), parse(b)
        if is_error(ref) or a == b and not q.any:
            assert a == b, "%r\n  server: %r\n  redis:  %r" % (args, a[:3000], b[:3000])
            return
        assert isinstance(sub, list), "%r\n  server: %r\n  redis:  %r" % (args, a[:3000], b[:3000])
        if q.any:
            self.check_any(args, q, sub, ref)
        elif q.sort or q.count:
            self.check_sorted(args, q, sub, ref, q.count)
        else:
            assert sorted(map(freeze, sub)) == sorted(map(freeze, ref)), (
                "%r\n  server: %r\n  redis:  %r" % (args, sub[:50], ref[:50]))

    def stored(self, args, q, dst, storedist):
        """Compare a storing search's reply and what it stored (ZRANGE … WITHSCORES)."""
        a, b = self.both(*args)
        assert a == b, "%r\n  server: %r\n  redis:  %r" % (args, a[:300], b[:300])
        if is_error(parse(b)):
            return
        a, b = self.both("ZRANGE", dst, 0, -1, "WITHSCORES")
        if a == b and not q.any:
            return
        msg = "%r\n  server: %r\n  redis:  %r" % (args, a[:3000], b[:3000])
        sp, rp = zpairs(parse(a)), zpairs(parse(b))
        assert len(sp) == len(rp) == parse(self.sub.call("ZCARD", dst)), msg
        dist = self.dist_map(q)

        def value(m, s):
            return float(s) if storedist else int(s)

        def want(m):
            return dist[m] if storedist else self.score[m]

        for m, s in sp + rp:  # each one of the whole result, with its own score
            assert m in dist and value(m, s) == want(m), msg
        keyed = [(value(m, s), m) for m, s in sp]  # in ZRANGE's order: by score, then member
        assert keyed == sorted(keyed) and len({m for m, _ in sp}) == len(sp), msg
        if q.any:
            return
        # The same members, except in a run of equal distance that COUNT cut; ZRANGE's
        # order (score, then member) whenever the same members were kept.
        runs_s, runs_r, sizes = {}, {}, {}
        for pairs, runs in ((sp, runs_s), (rp, runs_r)):
            for m, _ in pairs:
                runs.setdefault(dist[m], set()).add(m)
        for v in dist.values():
            sizes[v] = sizes.get(v, 0) + 1
        assert {d: len(v) for d, v in runs_s.items()} == {d: len(v) for d, v in runs_r.items()}, msg
        for d, ms in runs_s.items():
            if not q.count or len(ms) == sizes[d]:
                assert ms == runs_r[d], msg
        if {m for m, _ in sp} == {m for m, _ in rp}:
            assert [m for m, _ in sp] == [m for m, _ in rp], msg
            if not storedist:
                assert a == b, msg

    # --- random arguments

    def fmt(self, x):
        r = self.rnd.random()
        if r < 0.6:
            return repr(x)
        if r < 0.9:
            return "%.6f" % x
        return "%.2f" % x

    def point(self):
        rnd = self.rnd
        r = rnd.random()
        if r < 0.4:
            lon, lat = rnd.uniform(-180, 180), rnd.uniform(-LAT_MAX, LAT_MAX)
        elif r < 0.55:  # near the poles
            lon, lat = rnd.uniform(-180, 180), rnd.choice((1, -1)) * rnd.uniform(80, LAT_MAX)
        elif r < 0.7:   # both sides of the antimeridian
            lon, lat = rnd.choice((1, -1)) * rnd.uniform(178, 180), rnd.uniform(-70, 70)
        elif r < 0.9:   # in one city
            lon, lat = CITY[0] + rnd.uniform(-0.05, 0.05), CITY[1] + rnd.uniform(-0.05, 0.05)
        else:           # the corners and edges of the valid range
            lon, lat = rnd.choice(((180, LAT_MAX), (-180, -LAT_MAX), (180, -LAT_MAX), (-180, LAT_MAX),
                                   (0, 0), (180, 0), (-180, 0), (0, LAT_MAX), (0, -LAT_MAX), (90, 45)))
            return str(lon), str(lat)
        lon = min(180.0, max(-180.0, lon))
        lat = min(LAT_MAX, max(-LAT_MAX, lat))
        return self.fmt(lon), self.fmt(lat)

    def unit(self):
        u = self.rnd.choice(list(UNITS))
        return self.rnd.choice((u, u, u.upper(), u.capitalize()))

    def distance(self, unit):
        rnd = self.rnd
        r = rnd.random()
        if r < 0.03:
            return "0"
        if r < 0.05:
            return "inf"
        meters = 10 ** rnd.uniform(0 if rnd.random() < 0.3 else 3, 7.35)  # 1 m .. beyond the antipode
        v = meters / UNITS[unit.lower()]
        return repr(v) if rnd.random() < 0.5 else "%.3f" % v

    def center_member(self):
        if self.rnd.random() < 0.03:
            return "no-such-member"
        return self.rnd.choice(self.members)

    def word(self, w):
        r = self.rnd.random()
        return w if r < 0.7 else (w.lower() if r < 0.85 else w.capitalize())


@pytest.fixture(scope="module")
def reference():
    ref = ServerProcess(kind="redis")
    yield ref
    ref.stop()


@pytest.fixture
def diff(request, server, reference):
    sub, ref = Conn(server, timeout=30), Conn(reference, timeout=30)
    for c in (sub, ref):
        assert c.call("FLUSHALL") == b"+OK\r\n"
    # One seed per test, so that each can be run on its own.
    d = Diff(sub, ref, random.Random("geo:" + request.node.name))
    yield d
    sub.close()
    ref.close()


def populate(d, n=330):
    """GEOADD a few hundred points in batches with random options (replies compared): some
    at the very same place under several names, some moved afterwards, a few batches that
    fail part way; then compare every member's score (ZRANGE WITHSCORES)."""
    rnd = d.rnd
    names = ["m%d" % i for i in range(n)] + ["", "with space", b"\x00bin\xff", "123", "-0.5", "x" * 100]
    pts = []
    for name in names:
        if pts and rnd.random() < 0.05:
            pts.append((*rnd.choice(pts)[:2], name))   # where another member is
        else:
            pts.append((*d.point(), name))
    for k in range(15):
        pts.append((*rnd.choice(pts)[:2], "dup%d" % k))
    rnd.shuffle(pts)
    i = 0
    while i < len(pts):
        batch = pts[i:i + rnd.randint(1, 25)]
        i += len(batch)
        args = [a for p in batch for a in p]
        opts = rnd.choice(([], [], [], ["CH"], ["NX"], ["XX"], ["NX", "CH"], ["XX", "CH"], ["ch", "nx"]))
        d.same("GEOADD", SRC, *opts, *args)
        if "XX" in opts:  # added nothing new: add them now
            d.same("GEOADD", SRC, *args)
        r = rnd.random()
        if r < 0.1:    # move a few members
            moved = [(*d.point(), p[2]) for p in rnd.sample(pts[:i], min(i, rnd.randint(1, 5)))]
            d.same("GEOADD", SRC, *rnd.choice(([], ["CH"], ["XX", "CH"], ["NX"], ["NX", "CH"])),
                   *[a for p in moved for a in p])
        elif r < 0.16:  # a batch failing at its end adds nothing
            bad = rnd.choice((("200", "100"), ("180.0000001", "0"), ("0", "85.0511288"), ("-inf", "0"),
                              ("1e10", "5"), ("abc", "0"), ("0", "nan")))
            d.same("GEOADD", SRC, *args, bad[0], bad[1], "bad")
        elif r < 0.2:
            d.same("GEOADD", SRC, "NX", "XX", *args)
    d.load_scores(SRC)
    assert len(d.score) >= 300 or n < 300


def test_differential_points(diff):
    d = diff
    populate(d)
    rnd = d.rnd
    d.same("ZCARD", SRC)
    for m in d.members:
        d.same("ZSCORE", SRC, m)
    others = d.members + [b"nope"]
    # Every member's position and hash, in one call each, then random lists.
    d.same("GEOPOS", SRC, *d.members)
    d.same("GEOHASH", SRC, *d.members)
    for _ in range(100):
        ms = [rnd.choice(others) for _ in range(rnd.randint(1, 8))]
        d.same("GEOPOS", SRC, *ms)
        d.same("GEOHASH", SRC, *ms)
    for _ in range(400):
        m1, m2 = rnd.choice(others), rnd.choice(others)
        unit = rnd.choice((None, "m", "km", "mi", "ft", "KM", "Ft"))
        d.same("GEODIST", SRC, m1, m2, *([unit] if unit else []))
    for m in d.members[:40]:
        for unit in ("m", "km", "mi", "ft"):
            d.same("GEODIST", SRC, m, d.members[-1], unit)
    d.same("GEOPOS", "missing", "a")
    d.same("GEOHASH", "missing", "a")
    d.same("GEODIST", "missing", "a", "b", "km")


def test_differential_geosearch(diff):
    d = diff
    populate(d)
    for _ in range(700):
        q = Query(d)
        d.search(q.geosearch(d.rnd.choice(("GEOSEARCH", "GEOSEARCH", "geosearch"))), q)
    # From members' exact places (as GEOPOS prints them), tiny and huge shapes.
    for m in d.rnd.sample(d.members, 20):
        lon, lat = parse(d.ref.call("GEOPOS", SRC, m))[0]
        for shape in (["BYRADIUS", "0", "m"], ["BYRADIUS", "1", "m"], ["BYBOX", "2", "2", "m"],
                      ["BYRADIUS", "20000", "km"], ["BYBOX", "40000", "20000", "km"]):
            for center in (["FROMMEMBER", m], ["FROMLONLAT", lon, lat]):
                q = Query(d)
                q.center, q.shape, q.withs, q.sort, q.count, q.any = center, shape, [], "ASC", 0, False
                d.search(["GEOSEARCH", SRC, *center, *shape, "WITHDIST", "WITHHASH", "ASC"], q)


def test_differential_georadius(diff):
    d = diff
    populate(d)
    for _ in range(500):
        q = Query(d, radius_only=True)
        d.search(q.georadius(ro=d.rnd.random() < 0.3), q)


def test_differential_store(diff):
    d = diff
    populate(d)
    rnd = d.rnd
    for _ in range(250):
        dst = rnd.choice(SPREAD[1:])  # another key, on another shard
        if rnd.random() < 0.2:
            d.same("SET", dst, "old")
        storedist = rnd.random() < 0.5
        if rnd.random() < 0.5:
            q = Query(d, store=True)
            args = q.geosearchstore(dst, storedist, rnd)
        else:
            q = Query(d, radius_only=True, store=True)
            args = q.georadius() + ["STOREDIST" if storedist else "STORE", dst]
        d.stored(args, q, dst, storedist)
        d.same("EXISTS", dst)
        d.same("TYPE", dst)
    d.same("ZCARD", SRC)
    d.same("ZRANGE", SRC, 0, -1, "WITHSCORES")


def test_differential_resp3(diff):
    d = diff
    populate(d, n=120)
    for c in (d.sub, d.ref):
        c.call("HELLO", "3")
    rnd = d.rnd
    for _ in range(60):
        ms = [rnd.choice(d.members + [b"nope"]) for _ in range(rnd.randint(1, 5))]
        d.same("GEOPOS", SRC, *ms)
        d.same("GEOHASH", SRC, *ms)
        d.same("GEODIST", SRC, ms[0], ms[-1], d.unit())
    for _ in range(150):
        q = Query(d)
        d.search(q.geosearch(), q)
