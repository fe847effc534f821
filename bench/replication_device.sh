#!/bin/sh
# Issue #38's figures on a borrowed many-core machine with nothing installed
# (the device tool), in one call: bench/replication.py over the binaries
# bundled in .scale (bench/scale.py bundle: peregrine, redis-server,
# redis-benchmark and their libraries), with the primary, the replica and
# the load generator each on cores of their own, which two cores cannot
# give (docs/replication.md, "Measured"). Run it here first with small
# figures, e.g.
#   BENCH_SERVER_CPUS=0 BENCH_REPLICA_CPUS=1 BENCH_CLIENT_CPUS=1 KEYS=20000 \
#       REQUESTS=100000 OUT=/tmp/repl-out sh bench/replication_device.sh
# Results go to $OUT (replication16.json, replication16.log).
set -u
OUT=${OUT:-/tmp/repl-out}
mkdir -p "$OUT"
bundle=$(cd "$(dirname "$0")/../.scale" && pwd)
# Each bundled binary under its own name on PATH, run with the bundle's
# libraries (bench/replication.py starts redis-server and redis-benchmark
# by name).
wrap=$(mktemp -d)
for b in peregrine redis-server redis-benchmark redis-cli; do
    printf '#!/bin/sh\nexec "%s/lib/ld-linux-x86-64.so.2" --library-path "%s/lib" "%s/bin/%s" "$@"\n' \
        "$bundle" "$bundle" "$bundle" "$b" > "$wrap/$b"
    chmod +x "$wrap/$b"
done
export PATH="$wrap:$PATH" PYTHONUNBUFFERED=1
export BENCH_SERVER_CPUS=${BENCH_SERVER_CPUS:-0-1} BENCH_REPLICA_CPUS=${BENCH_REPLICA_CPUS:-2-3}
export BENCH_CLIENT_CPUS=${BENCH_CLIENT_CPUS:-4-7}
python3 bench/replication.py "$wrap/peregrine" --keys "${KEYS:-10000000}" --requests "${REQUESTS:-2000000}" \
    --no-docs --json "$OUT/replication16.json" 2>&1 | tee "$OUT/replication16.log"
rm -rf "$wrap"
