# Connection-level commands: PING/ECHO/QUIT/SELECT/HELLO/RESET/CLIENT *, RESP3 reply types,
# unknown-command and wrong-arity error texts.

import pytest
import redis

from conftest import IS_REDIS
from helpers import Conn, arity, client_fields, config_set, encode, raises, raw_client, rc, rc3  # noqa: F401

BAD_NAME = "Client names cannot contain spaces, newlines or special characters."

# CLIENT LIST / CLIENT INFO field names, in order. Redis 7.2 appends lib-name and lib-ver.
CLIENT_FIELDS_70 = ("id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free "
                    "argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp").split()
CLIENT_FIELDS_72 = CLIENT_FIELDS_70 + ["lib-name", "lib-ver"]

skip_72 = pytest.mark.skipif(IS_REDIS, reason="Redis 7.2 feature; Debian ships 7.0")


def parse_hello_resp2(reply):
    assert isinstance(reply, list) and len(reply) == 14
    return dict(zip(reply[0::2], reply[1::2]))


# ---------------------------------------------------------------- PING / ECHO

def test_ping(rc):
    assert rc.execute_command("PING") == b"PONG"
    assert rc.execute_command("PING", "hello world") == b"hello world"
    assert rc.execute_command("PING", "") == b""
    with raises(arity("ping")):
        rc.execute_command("PING", "a", "b")


def test_ping_raw(server):
    with Conn(server) as c:
        assert c.call("PING") == b"+PONG\r\n"
        assert c.call("PING", "x y") == b"$3\r\nx y\r\n"
        assert c.inline("ping\r\n") == b"+PONG\r\n"


def test_echo(rc):
    assert rc.execute_command("ECHO", "hi") == b"hi"
    assert rc.execute_command("ECHO", b"\x00\r\n\xff") == b"\x00\r\n\xff"
    assert rc.execute_command("ECHO", "") == b""
    with raises(arity("echo")):
        rc.execute_command("ECHO")
    with raises(arity("echo")):
        rc.execute_command("ECHO", "a", "b")


# ---------------------------------------------------------------- QUIT

def test_quit_replies_ok_and_closes(server):
    with Conn(server) as c:
        c.send(b"QUIT\r\n")
        assert c.read_until_closed() == b"+OK\r\n"


def test_quit_discards_pipelined_commands(server, rc):
    with Conn(server) as c:
        c.send(encode("QUIT") + encode("SET", "after-quit", "1"))
        assert c.read_until_closed() == b"+OK\r\n"
    assert rc.execute_command("EXISTS", "after-quit") == 0


# ---------------------------------------------------------------- SELECT (connection state)

def test_select_reply_and_state(server):
    with Conn(server) as c:
        assert c.call("SELECT", "2") == b"+OK\r\n"
        assert c.call("SET", "sel-k", "v") == b"+OK\r\n"
        assert c.call("SELECT", "0") == b"+OK\r\n"
        assert c.call("EXISTS", "sel-k") == b":0\r\n"
        assert c.call("SELECT", "16") == b"-ERR DB index is out of range\r\n"
        assert c.call("SELECT", "2") == b"+OK\r\n"
        assert c.call("DEL", "sel-k") == b":1\r\n"


# ---------------------------------------------------------------- HELLO

def test_hello_2(rc):
    cid = rc.execute_command("CLIENT", "ID")
    h = parse_hello_resp2(rc.execute_command("HELLO", "2"))
    assert list(h.keys()) == [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]
    assert isinstance(h[b"server"], bytes) and h[b"server"]
    assert isinstance(h[b"version"], bytes) and h[b"version"]
    assert h[b"proto"] == 2
    assert h[b"id"] == cid
    assert h[b"mode"] == b"standalone"
    assert h[b"role"] == b"master"
    assert h[b"modules"] == []


def test_hello_without_version_reports_current_protocol(server):
    with Conn(server) as c:
        reply = c.call("HELLO")
        assert reply.startswith(b"*14\r\n$6\r\nserver\r\n")
        assert b"$5\r\nproto\r\n:2\r\n" in reply
        c.call("HELLO", "3")
        reply = c.call("HELLO")
        assert reply.startswith(b"%7\r\n$6\r\nserver\r\n")
        assert b"$5\r\nproto\r\n:3\r\n" in reply


def test_hello_3_is_a_map(server):
    with Conn(server) as c:
        cid = int(c.call("CLIENT", "ID")[1:-2])
        reply = c.call("HELLO", "3")
        assert reply.startswith(b"%7\r\n$6\r\nserver\r\n$")
        assert b"$7\r\nversion\r\n$" in reply
        assert b"$5\r\nproto\r\n:3\r\n" in reply
        assert (b"$2\r\nid\r\n:%d\r\n" % cid) in reply
        assert b"$4\r\nmode\r\n$10\r\nstandalone\r\n" in reply
        assert b"$4\r\nrole\r\n$6\r\nmaster\r\n" in reply
        assert reply.endswith(b"$7\r\nmodules\r\n*0\r\n")
        # Same protocol can be re-requested, and one can go back to RESP2.
        assert c.call("HELLO", "3").startswith(b"%7\r\n")
        assert c.call("GET", "hello-missing") == b"_\r\n"
        assert c.call("HELLO", "2").startswith(b"*14\r\n")
        assert c.call("GET", "hello-missing") == b"$-1\r\n"


def test_hello_3_decoded(rc3):
    h = rc3.execute_command("HELLO", "3")
    assert isinstance(h, dict)
    assert h[b"proto"] == 3
    assert h[b"mode"] == b"standalone"
    assert h[b"role"] == b"master"
    assert h[b"modules"] == []
    assert h[b"id"] == rc3.execute_command("CLIENT", "ID")


def test_hello_setname(rc):
    h = parse_hello_resp2(rc.execute_command("HELLO", "2", "SETNAME", "conn-1"))
    assert h[b"proto"] == 2
    assert rc.execute_command("CLIENT", "GETNAME") == b"conn-1"


def test_hello_auth_default_user_without_password(rc):
    h = parse_hello_resp2(rc.execute_command("HELLO", "2", "AUTH", "default", "anything"))
    assert h[b"proto"] == 2
    h = parse_hello_resp2(rc.execute_command("HELLO", "2", "AUTH", "default", "x", "SETNAME", "n2"))
    assert rc.execute_command("CLIENT", "GETNAME") == b"n2"


def test_hello_auth_and_setname_raw(server):
    with Conn(server) as c:
        reply = c.call("HELLO", "3", "auth", "default", "pw", "setname", "n1")
        assert reply.startswith(b"%7\r\n")
        assert c.call("CLIENT", "GETNAME") == b"$2\r\nn1\r\n"


@pytest.mark.parametrize("ver", ["4", "1", "0", "-1", "100"])
def test_hello_unsupported_protocol(server, ver):
    with Conn(server) as c:
        assert c.call("HELLO", ver) == b"-NOPROTO unsupported protocol version\r\n"
        # Protocol unchanged.
        assert c.call("GET", "hello-missing") == b"$-1\r\n"


def test_hello_unsupported_protocol_redis_py(rc):
    with pytest.raises(redis.ResponseError, match=r"^NOPROTO unsupported protocol version$"):
        rc.execute_command("HELLO", "4")


@pytest.mark.parametrize("ver", ["abc", "3.0", ""])
def test_hello_protocol_not_integer(server, ver):
    with Conn(server) as c:
        assert c.call("HELLO", ver) == b"-ERR Protocol version is not an integer or out of range\r\n"


@pytest.mark.parametrize("args,opt", [
    (("FOO",), "FOO"),
    (("foo", "bar"), "foo"),
    (("AUTH", "default"), "AUTH"),
    (("SETNAME",), "SETNAME"),
    (("setname",), "setname"),
    (("a\0b",), "a"),  # printed as C's %s does: up to a NUL byte
])
def test_hello_syntax_error(server, args, opt):
    with Conn(server) as c:
        assert c.call("HELLO", "3", *args) == (
            b"-ERR Syntax error in HELLO option '%s'\r\n" % opt.encode())
        assert c.call("GET", "hello-missing") == b"$-1\r\n"


def test_hello_bad_setname_changes_nothing(server):
    with Conn(server) as c:
        assert c.call("HELLO", "3", "SETNAME", "bad name") == (
            b"-ERR " + BAD_NAME.encode() + b"\r\n")
        assert c.call("GET", "hello-missing") == b"$-1\r\n"
        assert c.call("CLIENT", "GETNAME") == b"$-1\r\n"


def test_hello_wrong_user(server):
    with Conn(server) as c:
        assert c.call("HELLO", "3", "AUTH", "nosuchuser", "pw") == (
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
        assert c.call("GET", "hello-missing") == b"$-1\r\n"


@skip_72
def test_hello_checks_every_option_before_applying_any(server):
    # Redis 7.2: options are all checked first, then the last AUTH is tried, then
    # the name is set (7.0 applied them one by one; docs/differential.md).
    with Conn(server) as c:
        assert c.call("HELLO", "3", "SETNAME", "ok", "FOO") == b"-ERR Syntax error in HELLO option 'FOO'\r\n"
        assert c.call("CLIENT", "GETNAME") == b"$-1\r\n"
        assert c.call("HELLO", "3", "AUTH", "nosuchuser", "pw", "FOO") == (
            b"-ERR Syntax error in HELLO option 'FOO'\r\n")
        assert c.call("HELLO", "3", "SETNAME", "ok", "AUTH", "nosuchuser", "pw") == (
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
        assert c.call("CLIENT", "GETNAME") == b"$-1\r\n"
        assert c.call("GET", "hello-missing") == b"$-1\r\n"  # still RESP2
        assert c.call("HELLO", "3", "AUTH", "nosuchuser", "pw", "AUTH", "default", "pw").startswith(b"%7\r\n")


# ---------------------------------------------------------------- RESET

def test_reset(server):
    with Conn(server) as c:
        assert c.call("SELECT", "3") == b"+OK\r\n"
        assert c.call("SET", "reset-k", "v") == b"+OK\r\n"
        assert c.call("CLIENT", "SETNAME", "before-reset") == b"+OK\r\n"
        assert c.call("HELLO", "3").startswith(b"%7\r\n")
        assert c.call("RESET") == b"+RESET\r\n"
        assert c.call("GET", "reset-k") == b"$-1\r\n"  # back to db 0 and RESP2
        assert c.call("CLIENT", "GETNAME") == b"$-1\r\n"
        info = c.call("CLIENT", "INFO")
        _, d = client_fields(info.split(b"\r\n", 1)[1])
        assert d["db"] == "0"
        assert d["name"] == ""
        assert d["resp"] == "2"
        assert c.call("SELECT", "3") == b"+OK\r\n"
        assert c.call("DEL", "reset-k") == b":1\r\n"
        assert c.call("RESET", "x") == b"-ERR wrong number of arguments for 'reset' command\r\n"


def test_reset_redis_py(rc):
    rc.execute_command("CLIENT", "SETNAME", "x")
    assert rc.execute_command("RESET") == b"RESET"
    assert rc.execute_command("CLIENT", "GETNAME") is None


@skip_72
def test_reset_keeps_lib_info(server):
    with Conn(server) as c:
        assert c.call("CLIENT", "SETINFO", "LIB-NAME", "keepme") == b"+OK\r\n"
        assert c.call("RESET") == b"+RESET\r\n"
        info = c.call("CLIENT", "INFO").split(b"\r\n", 1)[1]
        assert client_fields(info)[1]["lib-name"] == "keepme"


# ---------------------------------------------------------------- CLIENT ID / SETNAME / GETNAME

def test_client_id(server, rc):
    a = rc.execute_command("CLIENT", "ID")
    assert isinstance(a, int) and a > 0
    assert rc.execute_command("CLIENT", "ID") == a
    other = raw_client(server)
    try:
        b = other.execute_command("CLIENT", "ID")
        assert b > a
    finally:
        other.close()
    with raises(arity("client|id")):
        rc.execute_command("CLIENT", "ID", "x")


def test_client_setname_getname(rc):
    assert rc.execute_command("CLIENT", "GETNAME") is None
    assert rc.execute_command("CLIENT", "SETNAME", "my-conn_1:2") == b"OK"
    assert rc.execute_command("CLIENT", "GETNAME") == b"my-conn_1:2"
    assert rc.execute_command("CLIENT", "SETNAME", "!~#{}") == b"OK"
    assert rc.execute_command("CLIENT", "GETNAME") == b"!~#{}"
    # An empty name removes the name.
    assert rc.execute_command("CLIENT", "SETNAME", "") == b"OK"
    assert rc.execute_command("CLIENT", "GETNAME") is None


@pytest.mark.parametrize("name", ["a b", "a\nb", "a\rb", "tab\t", "\x00", "caf\xe9", "\x7f", " "])
def test_client_setname_invalid(rc, name):
    rc.execute_command("CLIENT", "SETNAME", "good")
    with raises(BAD_NAME):
        rc.execute_command("CLIENT", "SETNAME", name)
    assert rc.execute_command("CLIENT", "GETNAME") == b"good"


def test_client_name_arity(rc):
    with raises(arity("client|setname")):
        rc.execute_command("CLIENT", "SETNAME")
    with raises(arity("client|setname")):
        rc.execute_command("CLIENT", "SETNAME", "a", "b")
    with raises(arity("client|getname")):
        rc.execute_command("CLIENT", "GETNAME", "x")


def test_client_getname_raw(server):
    with Conn(server) as c:
        assert c.call("CLIENT", "GETNAME") == b"$-1\r\n"
        assert c.call("CLIENT", "SETNAME", "abc") == b"+OK\r\n"
        assert c.call("CLIENT", "GETNAME") == b"$3\r\nabc\r\n"
        c.call("HELLO", "3")
        assert c.call("CLIENT", "SETNAME", "") == b"+OK\r\n"
        assert c.call("CLIENT", "GETNAME") == b"_\r\n"


# ---------------------------------------------------------------- CLIENT LIST / INFO

def expected_fields():
    return CLIENT_FIELDS_70 if IS_REDIS else CLIENT_FIELDS_72


def test_client_info_fields(server):
    with Conn(server) as c:
        assert c.call("CLIENT", "SETNAME", "info-test") == b"+OK\r\n"
        assert c.call("SELECT", "5") == b"+OK\r\n"
        cid = int(c.call("CLIENT", "ID")[1:-2])
        reply = c.call("CLIENT", "INFO")
        assert reply.startswith(b"$")
        body = reply.split(b"\r\n", 1)[1][:-2]
        assert body.endswith(b"\n")
        assert body.count(b"\n") == 1
        names, d = client_fields(body)
        assert names == expected_fields()
        local = c.sock.getsockname()
        assert d["id"] == str(cid)
        assert d["addr"] == "%s:%d" % (local[0], local[1])
        assert d["laddr"] == "%s:%d" % (server.host, server.port)
        assert int(d["fd"]) >= 0
        assert d["name"] == "info-test"
        assert int(d["age"]) >= 0
        assert int(d["idle"]) >= 0
        assert d["flags"] == "N"
        assert d["db"] == "5"
        assert d["sub"] == "0"
        assert d["psub"] == "0"
        assert d["multi"] == "-1"
        assert d["cmd"] == "client|info"
        assert d["user"] == "default"
        assert d["resp"] == "2"


def test_client_info_resp3_is_verbatim(server):
    with Conn(server) as c:
        c.call("HELLO", "3")
        reply = c.call("CLIENT", "INFO")
        assert reply.startswith(b"=")
        header, rest = reply.split(b"\r\n", 1)
        assert int(header[1:]) == len(rest) - 2
        assert rest.startswith(b"txt:id=")
        assert client_fields(rest[4:-2])[1]["resp"] == "3"
        reply = c.call("CLIENT", "LIST")
        assert reply.startswith(b"=") and b"\r\ntxt:id=" in reply


def test_client_list(server, rc):
    with Conn(server) as a, Conn(server) as b:
        a.call("CLIENT", "SETNAME", "list-a")
        b.call("CLIENT", "SETNAME", "list-b")
        aid = int(a.call("CLIENT", "ID")[1:-2])
        bid = int(b.call("CLIENT", "ID")[1:-2])
        text = rc.execute_command("CLIENT", "LIST")
        assert isinstance(text, bytes) and text.endswith(b"\n")
        lines = text.decode().split("\n")[:-1]
        parsed = [client_fields(line) for line in lines]
        for names, _ in parsed:
            assert names == expected_fields()
        by_id = {int(d["id"]): d for _, d in parsed}
        assert by_id[aid]["name"] == "list-a"
        assert by_id[bid]["name"] == "list-b"
        me = rc.execute_command("CLIENT", "ID")
        assert by_id[me]["cmd"] == "client|list"
        # Filter by id.
        text = rc.execute_command("CLIENT", "LIST", "ID", aid, bid, 999999999)
        ids = sorted(int(client_fields(line)[1]["id"]) for line in text.decode().split("\n")[:-1])
        assert ids == sorted([aid, bid])
        assert rc.execute_command("CLIENT", "LIST", "ID", 999999999) == b""
        text = rc.execute_command("CLIENT", "LIST", "TYPE", "normal")
        assert b"name=list-a " in text and b"name=list-b " in text


def test_client_list_names_refused_commands(server, rc):
    # cmd= is the command last looked up, refused or not (Redis sets it
    # before checking arity); an unknown command or subcommand leaves NULL.
    with Conn(server) as a:
        a.call("CLIENT", "SETNAME", "refused")

        def last():
            for line in rc.execute_command("CLIENT", "LIST").decode().split("\n")[:-1]:
                d = client_fields(line)[1]
                if d["name"] == "refused":
                    return d["cmd"]

        assert a.call("GET").startswith(b"-ERR wrong number of arguments")
        assert last() == "get"
        assert a.call("NOSUCHCMD").startswith(b"-ERR unknown command")
        assert last() == "NULL"
        assert a.call("SET", "k", "v") == b"+OK\r\n"
        assert last() == "set"
        assert a.call("CLIENT", "NOSUCH").startswith(b"-ERR unknown subcommand")
        assert last() == "NULL"
        a.call("SUBSCRIBE", "refused-ch")
        assert a.call("GET", "k").startswith(b"-ERR Can't execute 'get'")
        assert last() == "get"


def test_client_list_errors(rc):
    with raises("Unknown client type 'foo'"):
        rc.execute_command("CLIENT", "LIST", "TYPE", "foo")
    with raises("Invalid client ID"):
        rc.execute_command("CLIENT", "LIST", "ID", "abc")
    with raises("syntax error"):
        rc.execute_command("CLIENT", "LIST", "FOO")
    with raises("syntax error"):
        rc.execute_command("CLIENT", "LIST", "ID")
    with raises(arity("client|info")):
        rc.execute_command("CLIENT", "INFO", "x")


# ---------------------------------------------------------------- CLIENT KILL

def own_addr(conn):
    host, port = conn.sock.getsockname()[:2]
    return "%s:%d" % (host, port)


def test_client_kill_old_form(server):
    with Conn(server) as killer, Conn(server) as victim:
        assert victim.call("PING") == b"+PONG\r\n"
        assert killer.call("CLIENT", "KILL", own_addr(victim)) == b"+OK\r\n"
        assert victim.read_until_closed() == b""
        assert killer.call("CLIENT", "KILL", own_addr(victim)) == b"-ERR No such client\r\n"
        assert killer.call("CLIENT", "KILL", "1.2.3.4:5") == b"-ERR No such client\r\n"
        assert killer.call("PING") == b"+PONG\r\n"


def test_client_kill_old_form_self(server):
    with Conn(server) as c:
        c.send(encode("CLIENT", "KILL", own_addr(c)) + encode("PING"))
        assert c.read_until_closed() == b"+OK\r\n"


def test_client_kill_by_id(server):
    with Conn(server) as killer, Conn(server) as victim:
        vid = int(victim.call("CLIENT", "ID")[1:-2])
        assert killer.call("CLIENT", "KILL", "ID", vid) == b":1\r\n"
        assert victim.read_until_closed() == b""
        assert killer.call("CLIENT", "KILL", "ID", vid) == b":0\r\n"
        assert killer.call("CLIENT", "KILL", "ID", "999999999") == b":0\r\n"


def test_client_kill_by_addr(server):
    with Conn(server) as killer, Conn(server) as victim:
        assert killer.call("CLIENT", "KILL", "ADDR", own_addr(victim)) == b":1\r\n"
        assert victim.read_until_closed() == b""
        assert killer.call("CLIENT", "KILL", "ADDR", own_addr(victim)) == b":0\r\n"


def test_client_kill_skipme(server):
    with Conn(server) as c:
        cid = int(c.call("CLIENT", "ID")[1:-2])
        assert c.call("CLIENT", "KILL", "ID", cid) == b":0\r\n"
        assert c.call("CLIENT", "KILL", "ID", cid, "SKIPME", "yes") == b":0\r\n"
        assert c.call("PING") == b"+PONG\r\n"
        c.send(encode("CLIENT", "KILL", "ID", cid, "SKIPME", "no"))
        assert c.read_until_closed() == b":1\r\n"


def test_client_kill_by_laddr(server):
    with Conn(server) as killer, Conn(server) as v1, Conn(server) as v2:
        v1.call("PING")
        v2.call("PING")
        laddr = "%s:%d" % (server.host, server.port)
        n = int(killer.call("CLIENT", "KILL", "LADDR", laddr)[1:-2])
        assert n >= 2
        assert v1.read_until_closed() == b""
        assert v2.read_until_closed() == b""
        assert killer.call("PING") == b"+PONG\r\n"
        assert killer.call("CLIENT", "KILL", "LADDR", "1.2.3.4:5") == b":0\r\n"


def test_client_kill_combined_filters(server):
    with Conn(server) as killer, Conn(server) as victim:
        vid = int(victim.call("CLIENT", "ID")[1:-2])
        # Both filters must match.
        assert killer.call("CLIENT", "KILL", "ID", vid, "ADDR", "1.2.3.4:5") == b":0\r\n"
        assert victim.call("PING") == b"+PONG\r\n"
        assert killer.call("CLIENT", "KILL", "ADDR", own_addr(victim), "ID", vid) == b":1\r\n"
        assert victim.read_until_closed() == b""


@pytest.mark.parametrize("args,reply", [
    (("ID", "abc"), b"-ERR client-id should be greater than 0\r\n"),
    (("ID", "0"), b"-ERR client-id should be greater than 0\r\n"),
    (("ID", "-5"), b"-ERR client-id should be greater than 0\r\n"),
    (("FOO", "bar"), b"-ERR syntax error\r\n"),
    (("ID", "1", "SKIPME", "maybe"), b"-ERR syntax error\r\n"),
    (("ID", "1", "ADDR"), b"-ERR syntax error\r\n"),
    (("TYPE", "foo"), b"-ERR Unknown client type 'foo'\r\n"),
    (("ID",), b"-ERR No such client\r\n"),  # 3 arguments = old form, address "ID"
])
def test_client_kill_errors(server, args, reply):
    with Conn(server) as c:
        assert c.call("CLIENT", "KILL", *args) == reply
        assert c.call("PING") == b"+PONG\r\n"


def test_client_kill_arity(rc):
    with raises(arity("client|kill")):
        rc.execute_command("CLIENT", "KILL")


# ---------------------------------------------------------------- CLIENT SETINFO (7.2)

@skip_72
def test_client_setinfo(server):
    with Conn(server) as c:
        assert c.call("CLIENT", "SETINFO", "LIB-NAME", "mylib") == b"+OK\r\n"
        assert c.call("CLIENT", "SETINFO", "lib-ver", "1.2.3") == b"+OK\r\n"
        info = c.call("CLIENT", "INFO").split(b"\r\n", 1)[1]
        d = client_fields(info)[1]
        assert d["lib-name"] == "mylib"
        assert d["lib-ver"] == "1.2.3"
        assert c.call("CLIENT", "SETINFO", "Lib-Name", "") == b"+OK\r\n"
        info = c.call("CLIENT", "INFO").split(b"\r\n", 1)[1]
        assert client_fields(info)[1]["lib-name"] == ""


@skip_72
@pytest.mark.parametrize("args,reply", [
    (("FOO", "x"), b"-ERR Unrecognized option 'FOO'\r\n"),
    (("LIB-NAME", "a b"), b"-ERR LIB-NAME cannot contain spaces, newlines or special characters.\r\n"),
    (("lib-ver", "1\n2"), b"-ERR lib-ver cannot contain spaces, newlines or special characters.\r\n"),
    (("LIB-NAME",), b"-ERR wrong number of arguments for 'client|setinfo' command\r\n"),
    (("LIB-NAME", "a", "b"), b"-ERR wrong number of arguments for 'client|setinfo' command\r\n"),
])
def test_client_setinfo_errors(server, args, reply):
    with Conn(server) as c:
        assert c.call("CLIENT", "SETINFO", *args) == reply


@skip_72
def test_redis_py_reports_lib_name(server):
    c = server.client(protocol=2)
    try:
        d = client_fields(c.execute_command("CLIENT", "INFO"))[1]
        assert d["lib-name"].startswith("redis-py")
        assert d["lib-ver"] != ""
    finally:
        c.close()


# ---------------------------------------------------------------- RESP3 reply types over raw sockets

def test_resp3_raw_types(server):
    with Conn(server) as c:
        assert c.call("HELLO", "3").startswith(b"%7\r\n")
        assert c.call("GET", "r3-missing") == b"_\r\n"
        assert c.call("PING") == b"+PONG\r\n"
        assert c.call("SET", "r3-k", "v") == b"+OK\r\n"
        assert c.call("SET", "r3-k", "v", "NX") == b"_\r\n"
        assert c.call("SET", "r3-k", "w", "GET") == b"$1\r\nv\r\n"
        assert c.call("MGET", "r3-k", "r3-missing") == b"*2\r\n$1\r\nw\r\n_\r\n"
        assert c.call("GETDEL", "r3-missing") == b"_\r\n"
        assert c.call("INCR", "r3-n") == b":1\r\n"
        assert c.call("INCRBYFLOAT", "r3-f", "1.5") == b"$3\r\n1.5\r\n"
        assert c.call("TTL", "r3-missing") == b":-2\r\n"
        assert c.call("TYPE", "r3-k") == b"+string\r\n"
        assert c.call("CONFIG", "GET", "port") == (
            b"%%1\r\n$4\r\nport\r\n$%d\r\n%d\r\n" % (len(str(server.port)), server.port))
        assert c.call("CLIENT", "GETNAME") == b"_\r\n"
        assert c.call("RANDOMKEY").startswith(b"$")
        assert c.call("DEL", "r3-k", "r3-n", "r3-f") == b":3\r\n"
        assert c.call("GET", "a", "b") == b"-ERR wrong number of arguments for 'get' command\r\n"


def test_resp2_null_types(server):
    with Conn(server) as c:
        assert c.call("GET", "r2-missing") == b"$-1\r\n"
        assert c.call("MGET", "r2-missing") == b"*1\r\n$-1\r\n"
        assert c.call("SET", "r2-k", "v") == b"+OK\r\n"
        assert c.call("SET", "r2-k", "v", "NX") == b"$-1\r\n"
        assert c.call("CONFIG", "GET", "port") == (
            b"*2\r\n$4\r\nport\r\n$%d\r\n%d\r\n" % (len(str(server.port)), server.port))
        assert c.call("DEL", "r2-k") == b":1\r\n"


def test_resp3_redis_py_types(r3):
    r3.set("k", "v")
    assert r3.get("k") == b"v"
    assert r3.get("missing") is None
    assert r3.config_get("port") == {"port": str(r3.connection_pool.connection_kwargs["port"])}
    assert r3.incrbyfloat("f", "2.5") == 2.5


# ---------------------------------------------------------------- unknown command / subcommand / arity

def test_unknown_command(rc):
    with raises("unknown command 'foo', with args beginning with: 'a' 'b' "):
        rc.execute_command("foo", "a", "b")
    with raises("unknown command 'FooBar', with args beginning with: "):
        rc.execute_command("FooBar")


def test_unknown_command_raw(server):
    with Conn(server) as c:
        assert c.inline("FOO a b\r\n") == (
            b"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n")
        assert c.call("nosuch") == b"-ERR unknown command 'nosuch', with args beginning with: \r\n"
        assert c.call("") == b"-ERR unknown command '', with args beginning with: \r\n"
        # The connection stays usable.
        assert c.call("PING") == b"+PONG\r\n"


def test_unknown_command_args_truncated_to_128(server):
    with Conn(server) as c:
        assert c.call("FOO", "x" * 200) == (
            b"-ERR unknown command 'FOO', with args beginning with: '" + b"x" * 128 + b"' \r\n")
        assert c.call("FOO", "a" * 100, "b" * 100, "c") == (
            b"-ERR unknown command 'FOO', with args beginning with: '" + b"a" * 100 + b"' '"
            + b"b" * 25 + b"' \r\n")
        assert c.call("Z" * 200) == (
            b"-ERR unknown command '" + b"Z" * 128 + b"', with args beginning with: \r\n")


def test_unknown_command_and_subcommand_cut_arguments_at_nul(server):
    # Redis prints them with C's %s: each ends at its first NUL byte.
    with Conn(server) as c:
        assert c.call(b"GE\x00T", b"a\x00b", "c") == (
            b"-ERR unknown command 'GE', with args beginning with: 'a' 'c' \r\n")
        assert c.call("CLIENT", b"fo\x00o") == b"-ERR unknown subcommand 'fo'. Try CLIENT HELP.\r\n"


def test_unknown_command_newlines_sanitized(server):
    # Error strings may not contain CR/LF; Redis replaces them with spaces.
    with Conn(server) as c:
        assert c.call("FOO", "a\r\nb") == (
            b"-ERR unknown command 'FOO', with args beginning with: 'a  b' \r\n")
        assert c.call("PING") == b"+PONG\r\n"


@pytest.mark.parametrize("cmd,sub,container", [
    ("CLIENT", "foo", "CLIENT"),
    ("client", "FOO", "CLIENT"),
    ("CONFIG", "foo", "CONFIG"),
    ("command", "bar", "COMMAND"),
])
def test_unknown_subcommand(rc, cmd, sub, container):
    with raises("unknown subcommand '%s'. Try %s HELP." % (sub, container)):
        rc.execute_command(cmd, sub)


@pytest.mark.parametrize("args,name", [
    (("CLIENT",), "client"),
    (("CONFIG",), "config"),
    (("CLIENT", "SETNAME"), "client|setname"),
    (("client", "setname", "a", "b"), "client|setname"),
    (("CLIENT", "GETNAME", "x"), "client|getname"),
    (("CLIENT", "ID", "x"), "client|id"),
    (("CLIENT", "INFO", "x"), "client|info"),
    (("CLIENT", "KILL"), "client|kill"),
    (("CONFIG", "GET"), "config|get"),
    (("CONFIG", "SET", "timeout"), "config|set"),
    (("CONFIG", "RESETSTAT", "x"), "config|resetstat"),
    (("COMMAND", "COUNT", "x"), "command|count"),
    (("COMMAND", "GETKEYS"), "command|getkeys"),
    (("GET",), "get"),
    (("set", "k"), "set"),
    (("MGET",), "mget"),
    (("PING", "a", "b"), "ping"),
    (("SELECT",), "select"),
    (("HELLO", "3", "AUTH"), None),
])
def test_wrong_arity_texts(server, args, name):
    with Conn(server) as c:
        reply = c.call(*args)
        if name is None:
            assert reply == b"-ERR Syntax error in HELLO option 'AUTH'\r\n"
        else:
            assert reply == b"-ERR wrong number of arguments for '%s' command\r\n" % name.encode()
        assert c.call("PING") == b"+PONG\r\n"


def test_client_help(rc):
    lines = rc.execute_command("CLIENT", "HELP")
    assert isinstance(lines, list) and len(lines) > 5
    assert lines[0] == b"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert all(isinstance(x, bytes) for x in lines)
    assert any(x.startswith(b"SETNAME") for x in lines)
    assert lines[-2] == b"HELP"
    assert lines[-1] in (b"    Prints this help.", b"    Print this help.")


@pytest.mark.skipif(IS_REDIS, reason="Redis 7.2's; Debian's 7.0 has no CLIENT NO-TOUCH")
def test_client_no_touch_leaves_lfu_alone_but_for_touch(server, rc, config_set):
    # CLIENT NO-TOUCH (Redis 7.2): the client's commands, its transactions'
    # and its scripts' calls leave the keys' access data as it was; TOUCH
    # still touches. Under --threads 4 the key may live on another worker.
    config_set("maxmemory-policy", "allkeys-lfu")
    rc.execute_command("SET", "foo", "bar")
    c = raw_client(server)
    try:
        assert c.execute_command("CLIENT", "NO-TOUCH", "ON") == b"OK"
        assert b" flags=T " in c.execute_command("CLIENT", "INFO")
        before = rc.execute_command("OBJECT", "FREQ", "foo")
        for _ in range(50):
            c.execute_command("GET", "foo")
        c.execute_command("MULTI")
        c.execute_command("GET", "foo")
        c.execute_command("EXEC")
        c.execute_command("EVAL", "for i = 1, 50 do redis.call('get', KEYS[1]) end", 1, "foo")
        assert rc.execute_command("OBJECT", "FREQ", "foo") == before
        c.execute_command("TOUCH", "foo")
        touched = rc.execute_command("OBJECT", "FREQ", "foo")
        assert touched > before
        assert c.execute_command("CLIENT", "NO-TOUCH", "OFF") == b"OK"
        for _ in range(50):
            c.execute_command("GET", "foo")
        assert rc.execute_command("OBJECT", "FREQ", "foo") > touched
        with pytest.raises(redis.ResponseError, match="syntax error"):
            c.execute_command("CLIENT", "NO-TOUCH", "MAYBE")
        # RESET ends it.
        c.execute_command("CLIENT", "NO-TOUCH", "ON")
        c.execute_command("RESET")
        assert b" flags=N " in c.execute_command("CLIENT", "INFO")
    finally:
        c.close()
