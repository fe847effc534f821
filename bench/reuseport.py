#!/usr/bin/env python3
"""How the kernel spreads connections over N SO_REUSEPORT listeners on one
port — what per-thread listeners would get — against the acceptor's
least-connections hand-off, which splits them exactly (issue #5,
docs/transactions.md "Shape"). 50 connections from one client host, as
`redis-benchmark -c 50` opens them; 200 trials per N; loopback only.
"""
import socket, collections, statistics
def trial(n, conns=50):
    ls = []
    port = None
    for i in range(n):
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.bind(("127.0.0.1", port or 0)); port = s.getsockname()[1]; s.listen(256); s.setblocking(False); ls.append(s)
    cs = [socket.create_connection(("127.0.0.1", port)) for _ in range(conns)]
    counts = []
    for s in ls:
        k = 0
        while True:
            try:
                a, _ = s.accept(); a.close(); k += 1
            except BlockingIOError:
                break
        counts.append(k)
    for c in cs: c.close()
    for s in ls: s.close()
    return counts
for n in (2, 4):
    worst = []
    for t in range(200):
        c = trial(n)
        assert sum(c) == 50, c
        worst.append(max(c))
    ideal = 50 / n
    print(f"{n} listeners: busiest listener got {statistics.median(worst):.0f} of 50 (median), "
          f"max {max(worst)}; ideal {ideal:.1f}; runs >= 1.2x ideal: {sum(w >= 1.2*ideal for w in worst)}/200")
