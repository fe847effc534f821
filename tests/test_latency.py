# The latency monitor and latency tracking, as in Redis 7.2 (latency.c, and
# unit/latency-monitor.tcl and unit/info.tcl's latencystats tests):
# latency-monitor-threshold (0 = off, in ms) and the events it records
# ("command" for a DEBUG SLEEP, which is not a fast command), LATENCY LATEST /
# HISTORY (one sample per second, holding that second's max) / RESET / GRAPH /
# DOCTOR / HELP and their errors; latency-tracking and
# latency-tracking-info-percentiles, LATENCY HISTOGRAM (per command, RESP2 and
# RESP3 shapes, the bucket keys hdr_histogram gives) and INFO latencystats.
#
# With TEST_SERVER=redis the same tests run against redis-server (7.0, where
# 7.2 changed a behaviour the test says so).
import math
import re
import time

import pytest

from conftest import IS_REDIS
from helpers import Conn, info_dict, raises, raw_client

CFG_ERR = "CONFIG SET failed (possibly related to argument '%s') - %s"
PCT = "latency-tracking-info-percentiles"

# LATENCY HISTOGRAM's keys: hdr_histogram's log iterator (first bucket 1024 ns,
# base 2, 2 significant digits) reports each bucket by the highest value
# equivalent to 1024 << k ns, in µs (rounded down): 1, 2, 4, 8, 16, 33, 66,
# 132, 264, ... (not exact powers of two).
BUCKETS = [((1024 << k) + (8 << k) - 1) // 1000 for k in range(20)]


@pytest.fixture
def s(start_server):
    # Several workers on Peregrine: what each one measured is merged.
    if IS_REDIS:
        return start_server("--enable-debug-command", "yes")
    return start_server("--enable-debug-command", "yes", "--threads", "4")


@pytest.fixture
def c(s):
    cl = raw_client(s)
    cl.execute_command("PING")  # (redis-py's connection handshake done)
    yield cl
    cl.close()


@pytest.fixture
def c3(s):
    cl = raw_client(s, protocol=3)
    cl.execute_command("PING")
    yield cl
    cl.close()


def next_second():
    """Sleeps until just after the clock's next whole second (samples are per second)."""
    t = time.time()
    time.sleep(math.ceil(t) - t + 0.02)


def sleep_cmd(c, secs):
    assert c.execute_command("DEBUG", "SLEEP", secs) == b"OK"


def histogram(c, *names):
    """LATENCY HISTOGRAM as {name: (calls, [(bucket, cumulative count), ...])},
    from RESP2's flat arrays or RESP3's maps (checking each one's shape)."""
    reply = c.execute_command("LATENCY", "HISTOGRAM", *names)
    if isinstance(reply, list):
        assert len(reply) % 2 == 0
        reply = dict(zip(reply[::2], reply[1::2]))
        out = {}
        for name, v in reply.items():
            assert len(v) == 4 and v[0] == b"calls" and v[2] == b"histogram_usec", v
            flat = v[3]
            out[name.decode()] = (v[1], list(zip(flat[::2], flat[1::2])))
        return out
    out = {}
    for name, v in reply.items():
        assert list(v) == [b"calls", b"histogram_usec"], v
        out[name.decode()] = (v[b"calls"], list(v[b"histogram_usec"].items()))
    return out


def check_cdf(entry, calls):
    """`calls` calls; buckets increasing, counts cumulative (a bucket only where
    the count grew), ending at `calls`."""
    got, buckets = entry
    assert got == calls
    keys = [k for k, _ in buckets]
    counts = [n for _, n in buckets]
    assert all(isinstance(k, int) and k in BUCKETS for k in keys), keys
    assert keys == sorted(set(keys))
    assert counts == sorted(set(counts)) and counts[0] > 0 and counts[-1] == calls


def latencystats(c):
    """INFO latencystats as {command: value}."""
    d = info_dict(c.execute_command("INFO", "latencystats"))
    return {k[len("latency_percentiles_usec_"):]: v for k, v in d.items()}


def test_threshold_config(c):
    assert c.execute_command("CONFIG", "GET", "latency-monitor-threshold") == \
        [b"latency-monitor-threshold", b"0"]
    assert c.execute_command("CONFIG", "SET", "latency-monitor-threshold", "100") == b"OK"
    assert c.execute_command("CONFIG", "GET", "latency-monitor-threshold")[1] == b"100"
    with raises(CFG_ERR % ("latency-monitor-threshold",
                           "argument must be between 0 and 9223372036854775807 inclusive")):
        c.execute_command("CONFIG", "SET", "latency-monitor-threshold", "-1")
    for bad in ("abc", "1.5", ""):
        with raises(CFG_ERR % ("latency-monitor-threshold", "argument couldn't be parsed into an integer")):
            c.execute_command("CONFIG", "SET", "latency-monitor-threshold", bad)
    assert c.execute_command("CONFIG", "GET", "latency-monitor-threshold")[1] == b"100"


def test_nothing_recorded_when_off_or_below(c):
    # Threshold 0: the monitor is off, whatever the command's time.
    sleep_cmd(c, 0.2)
    assert c.execute_command("LATENCY", "LATEST") == []
    # Below the threshold: nothing.
    c.execute_command("CONFIG", "SET", "latency-monitor-threshold", "1000")
    sleep_cmd(c, 0.2)
    assert c.execute_command("LATENCY", "LATEST") == []
    assert c.execute_command("LATENCY", "HISTORY", "command") == []
    assert c.execute_command("LATENCY", "RESET") == 0


def test_latest_history_and_graph(s, c):
    c.execute_command("CONFIG", "SET", "latency-monitor-threshold", "100")
    next_second()
    before = int(time.time())
    sleep_cmd(c, 0.2)
    [[event, t, lat, mx]] = c.execute_command("LATENCY", "LATEST")
    # [event, time of the last sample, its latency (ms), all-time max (ms)]
    assert event == b"command"  # (DEBUG is not a fast command)
    assert before <= t <= time.time() + 1
    assert 200 <= lat < 2000 and mx == lat
    assert c.execute_command("LATENCY", "HISTORY", "command") == [[t, lat]]
    # Within the same second: one sample, holding the max (a smaller spike
    # leaves it, a bigger one raises it).
    sleep_cmd(c, 0.11)
    assert c.execute_command("LATENCY", "HISTORY", "command") == [[t, lat]]
    sleep_cmd(c, 0.3)
    assert int(time.time()) == t, "the clock passed a second (a loaded machine?)"
    [[t1, high]] = c.execute_command("LATENCY", "HISTORY", "command")
    assert t1 == t and 300 <= high < 2000
    assert c.execute_command("LATENCY", "LATEST") == [[b"command", t, high, high]]
    # Next second: a new sample after it (oldest first); LATEST shows the
    # newest sample's latency and the all-time max.
    next_second()
    sleep_cmd(c, 0.15)
    [[t1, h1], [t2, low]] = c.execute_command("LATENCY", "HISTORY", "command")
    assert (t1, h1) == (t, high) and t2 > t and 150 <= low < high
    assert c.execute_command("LATENCY", "LATEST") == [[b"command", t2, low, high]]
    # Unknown events: no samples. Event names are case-sensitive here.
    assert c.execute_command("LATENCY", "HISTORY", "nosuch") == []
    assert c.execute_command("LATENCY", "HISTORY", "COMMAND") == []

    graph = c.execute_command("LATENCY", "GRAPH", "command").decode()
    lines = graph.split("\n")
    assert lines[0] == "command - high %d ms, low %d ms (all time high %d ms)" % (high, low, high)
    assert lines[1] == "-" * 80
    assert len(lines) > 3
    # RESP3: a verbatim string (txt).
    with Conn(s) as k:
        k.call("HELLO", "3")
        got = k.call("LATENCY", "GRAPH", "command")
        assert got.startswith(b"=") and b"\r\ntxt:command - high %d ms" % high in got
    with raises("No samples available for event 'nosuch'"):
        c.execute_command("LATENCY", "GRAPH", "nosuch")
    with raises("No samples available for event 'COMMAND'"):
        c.execute_command("LATENCY", "GRAPH", "COMMAND")


def test_reset(c):
    c.execute_command("CONFIG", "SET", "latency-monitor-threshold", "100")
    assert c.execute_command("LATENCY", "RESET") == 0
    sleep_cmd(c, 0.2)
    # With names: how many of them existed (matched ignoring case).
    assert c.execute_command("LATENCY", "RESET", "nosuch") == 0
    assert c.execute_command("LATENCY", "RESET", "COMMAND", "nosuch") == 1
    assert c.execute_command("LATENCY", "LATEST") == []
    assert c.execute_command("LATENCY", "HISTORY", "command") == []
    # Without: every event.
    sleep_cmd(c, 0.2)
    n = len(c.execute_command("LATENCY", "LATEST"))
    assert n >= 1
    assert c.execute_command("LATENCY", "RESET") == n
    assert c.execute_command("LATENCY", "LATEST") == []
    assert c.execute_command("LATENCY", "RESET") == 0


def test_doctor(c, c3):
    # A report in prose: only loose checks (the text is the server's own).
    off = c.execute_command("LATENCY", "DOCTOR")
    assert isinstance(off, bytes) and off.strip()
    c.execute_command("CONFIG", "SET", "latency-monitor-threshold", "100")
    quiet = c.execute_command("LATENCY", "DOCTOR")
    assert isinstance(quiet, bytes) and quiet.strip()
    sleep_cmd(c, 0.2)
    report = c.execute_command("LATENCY", "DOCTOR")
    assert b"command" in report and report != quiet
    # RESP3: a verbatim string (redis-py hands over its text).
    assert b"command" in bytes(c3.execute_command("LATENCY", "DOCTOR"))


HELP = [
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
]


def test_help(c):
    got = [x.decode() for x in c.execute_command("LATENCY", "HELP")]
    assert got[:-1] == HELP
    assert len(got) == len(HELP) + 1


@pytest.mark.skipif(IS_REDIS, reason="7.0 says 'Prints this help.'; 7.2's addReplyHelp 'Print this help.'")
def test_help_footer(c):
    assert c.execute_command("LATENCY", "HELP")[-1] == b"    Print this help."


def test_errors(c):
    with raises("unknown subcommand 'foo'. Try LATENCY HELP."):
        c.execute_command("LATENCY", "foo")
    with raises("wrong number of arguments for 'latency' command"):
        c.execute_command("LATENCY")
    for cmd in (("HISTORY",), ("GRAPH",), ("HISTORY", "a", "b"), ("GRAPH", "a", "b"),
                ("LATEST", "x"), ("DOCTOR", "x"), ("HELP", "x")):
        with raises("wrong number of arguments for 'latency|%s' command" % cmd[0].lower()):
            c.execute_command("LATENCY", *cmd)


@pytest.mark.parametrize("proto", [2, 3])
def test_histogram(s, proto):
    c = raw_client(s, protocol=proto)
    c.execute_command("PING")
    assert c.execute_command("CONFIG", "RESETSTAT") == b"OK"
    # Only CONFIG RESETSTAT itself has run since (recorded after the reset).
    h = histogram(c)
    assert list(h) == ["config|resetstat"]
    check_cdf(h["config|resetstat"], 1)
    c.execute_command("SET", "a", "b")
    c.execute_command("SET", "c", "d")
    c.execute_command("GET", "a")
    c.execute_command("CLIENT", "ID")
    c.execute_command("CLIENT", "GETNAME")
    h = histogram(c)
    # Container commands report their subcommands; the first HISTOGRAM is in.
    assert set(h) == {"config|resetstat", "set", "get", "client|id", "client|getname",
                      "latency|histogram"}
    for name, calls in (("set", 2), ("get", 1), ("client|id", 1), ("latency|histogram", 1)):
        check_cdf(h[name], calls)
    # Named commands: only those with calls; unknown names are skipped; any
    # case; a container name gives its subcommands, "a|b" the one.
    h = histogram(c, "SET", "nosuch", "get", "hset")
    assert set(h) == {"set", "get"}
    check_cdf(h["set"], 2)
    assert set(histogram(c, "client")) == {"client|id", "client|getname"}
    assert set(histogram(c, "client|id")) == {"client|id"}
    assert histogram(c, "nosuch", "hset") == {}
    assert c.execute_command("LATENCY", "HISTOGRAM", "nosuch") == ([] if proto == 2 else {})
    c.close()


def test_histogram_buckets_and_tracking_off(c):
    c.execute_command("CONFIG", "RESETSTAT")
    sleep_cmd(c, 0.01)
    # One call of ~10 ms: one bucket, at least 10000 µs.
    [(key, n)] = histogram(c, "debug")["debug"][1]
    assert n == 1 and key in BUCKETS and key >= 10000
    # latency-tracking no: calls are counted (commandstats), not tracked.
    c.execute_command("CONFIG", "SET", "latency-tracking", "no")
    for _ in range(3):
        c.execute_command("SET", "a", "b")
    c.execute_command("CONFIG", "SET", "latency-tracking", "yes")
    c.execute_command("SET", "a", "b")
    check_cdf(histogram(c, "set")["set"], 1)
    assert info_dict(c.execute_command("INFO", "commandstats"))["cmdstat_set"].startswith("calls=4,")


def test_latencystats(c):
    assert c.execute_command("CONFIG", "GET", "latency-tracking") == [b"latency-tracking", b"yes"]
    assert c.execute_command("CONFIG", "GET", PCT) == [PCT.encode(), b"50 99 99.9"]
    c.execute_command("CONFIG", "RESETSTAT")
    assert list(latencystats(c)) == ["config|resetstat"]
    c.execute_command("SET", "a", "b")
    num = r"\d+\.\d{3}"
    line = latencystats(c)["set"]
    assert re.fullmatch(r"p50=%s,p99=%s,p99\.9=%s" % (num, num, num), line), line
    # Percentile names: "%f" with the trailing zeros (and dot) trimmed.
    c.execute_command("CONFIG", "SET", PCT, "50.0 99.5")
    assert c.execute_command("CONFIG", "GET", PCT)[1] == b"50 99.5"
    line = latencystats(c)["set"]
    assert re.fullmatch(r"p50=%s,p99\.5=%s" % (num, num), line), line
    c.execute_command("CONFIG", "SET", PCT, "0.0 50.0 100.0")
    assert c.execute_command("CONFIG", "GET", PCT)[1] == b"0 50 100"
    assert re.fullmatch(r"p0=%s,p50=%s,p100=%s" % (num, num, num), latencystats(c)["set"])
    # None at all (""): the lines stay, empty.
    c.execute_command("CONFIG", "SET", PCT, "")
    assert c.execute_command("CONFIG", "GET", PCT)[1] == b""
    assert latencystats(c)["set"] == ""
    c.execute_command("CONFIG", "SET", PCT, "50")
    # Invalid: the setting is left as it was.
    for bad in ("abc", "10.0 50.0 a"):
        with raises(CFG_ERR % (PCT, "Invalid latency-tracking-info-percentiles parameters")):
            c.execute_command("CONFIG", "SET", PCT, bad)
    for bad in ("101", "-1", "10.0 50.0 101.0"):
        with raises(CFG_ERR % (PCT, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")):
            c.execute_command("CONFIG", "SET", PCT, bad)
    assert c.execute_command("CONFIG", "GET", PCT)[1] == b"50"
    # The values are µs (the percentile's bucket, upper end): a 50 ms sleep.
    sleep_cmd(c, 0.05)
    m = re.fullmatch(r"p50=(%s)" % num, latencystats(c)["debug"])
    assert m and float(m.group(1)) >= 50000
    # latency-tracking no: the section is empty (the histograms are kept).
    c.execute_command("CONFIG", "SET", "latency-tracking", "no")
    assert c.execute_command("INFO", "latencystats") == b"# Latencystats\r\n"
    assert "set" in histogram(c)
    c.execute_command("CONFIG", "SET", "latency-tracking", "yes")
    c.execute_command("CONFIG", "RESETSTAT")
    assert "set" not in latencystats(c)
