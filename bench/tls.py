#!/usr/bin/env python3
"""TLS throughput (#22): Peregrine against Debian's redis-server (built with
TLS) in one run, both serving the same certificates on a tls-port with
client certificates required (MEASURING.md: a fresh server per measurement,
rounds interleaved, server on CPU 0, redis-benchmark --tls on CPU 1,
medians). Tests: SET and GET of 3-byte values over 100,000 keys (GET's
keys loaded first, over the plain port, unmeasured), 50 connections,
unpipelined (P1) and 16 deep (P16).

    python3 bench/tls.py [build/release/peregrine] [--rounds 3] [--quick | --smoke]

Writes bench/results/tls.json and the section between the "tls" markers of
docs/benchmarks.md. The certificates are made with the openssl tool in a
temporary directory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
from containers import measure_benchmark  # noqa: E402

BEGIN = "<!-- tls:begin -->"
END = "<!-- tls:end -->"

TESTS = [
    # id, label, pipeline, requests, redis-benchmark arguments
    ("set_p1", "SET over TLS P1", 1, 200_000, ["-r", "100000", "-t", "set"]),
    ("get_p1", "GET over TLS P1", 1, 200_000, ["-r", "100000", "-t", "get"]),
    ("set_p16", "SET over TLS P16", 16, 2_000_000, ["-r", "100000", "-t", "set"]),
    ("get_p16", "GET over TLS P16", 16, 2_000_000, ["-r", "100000", "-t", "get"]),
]


def make_certs(d: Path):
    def ossl(*a):
        subprocess.run(["openssl", *a], cwd=d, check=True, capture_output=True)
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
         "-subj", "/CN=bench CA")
    for name in ("server", "client"):
        ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
             "-subj", f"/CN={name}")
        ossl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", f"{name}.crt", "-days", "2")


class TlsPort:
    """The server as redis-benchmark sees it: its TLS port."""

    def __init__(self, srv, port):
        self.srv, self.port = srv, port

    def cpu_ticks(self):
        return self.srv.cpu_ticks()


def run_one(spec, workdir, certs: Path, tid, pipeline, n, args, rb):
    tls_port = bl.free_port()
    tls_spec = bl.ServerSpec(spec.name, spec.label, spec.binary, spec.extra + [
        "--tls-port", str(tls_port), "--tls-cert-file", str(certs / "server.crt"),
        "--tls-key-file", str(certs / "server.key"), "--tls-ca-cert-file", str(certs / "ca.crt")])
    srv = bl.Server(tls_spec, workdir)
    if "get" in args:
        bl.load_keys(srv.port, 100_000, 3)
    client = ["--tls", "--cacert", str(certs / "ca.crt"), "--cert", str(certs / "client.crt"),
              "--key", str(certs / "client.key")]
    try:
        r = measure_benchmark(TlsPort(srv, tls_port), spec, tid,
                              client + (["-P", str(pipeline)] if pipeline > 1 else []) + args, n, rb)
        r["command"] = r["command"].replace(" ".join(client), "--tls --cacert ca.crt --cert client.crt --key client.key")
        return r
    finally:
        srv.shutdown()


def main(argv=None) -> int:
    args, scale = bl.parse_bench_args(argv, only=False)
    rb = "redis-benchmark"
    binary, _ = bl.find_binaries(args.peregrine, [rb, "openssl"], "redis-tools openssl")
    records = []
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as workdir:
        certs = Path(workdir) / "certs"
        certs.mkdir()
        make_certs(certs)
        binary, shown = bl.snapshot_binary(binary, workdir)
        specs = [bl.peregrine_spec(binary), bl.redis_spec()]
        for rnd in range(args.rounds):
            for tid, _, p, n, rbargs in TESTS:
                for spec in specs if rnd % 2 == 0 else specs[::-1]:
                    r = run_one(spec, workdir, certs, tid, p, max(1000, int(n * scale)), rbargs, rb)
                    records.append(r)
                    print(f"{spec.label:9s} {tid:8s} {r['rps'] or 0:>12,.0f} req/s "
                          f"{r['cpu_us_per_req']:.3f} us CPU/req", flush=True)
    lines = [f"`python3 bench/tls.py` ({args.rounds} rounds, medians; Redis is Debian's redis-server 7.0 with its "
             f"TLS; Peregrine `--threads 1`; both require client certificates; server on CPU 0, "
             f"redis-benchmark --tls on CPU 1, 50 connections).", ""]
    lines += bl.speed_table(records, [(tid, label) for tid, label, *_ in TESTS])
    lines += ["", "Without pipelining redis-benchmark's core is the limit (its TLS work is the larger share), so "
              "requests/s there compare the load generator's cost per request more than the server's: server CPU "
              "per request is the figure to read (docs/security.md, \"Cost\")."]
    text = "\n".join(lines)
    print(text)
    if not args.no_docs:
        out = bl.REPO / "bench" / "results" / "tls.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"machine": bl.machine_info(), "binary": shown, "records": records}, indent=1))
        bl.put_docs_section(BEGIN, END, f"{BEGIN}\n{text}\n{END}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
