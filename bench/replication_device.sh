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
. "$(dirname "$0")/device_wrap.sh"
export BENCH_SERVER_CPUS=${BENCH_SERVER_CPUS:-0-1} BENCH_REPLICA_CPUS=${BENCH_REPLICA_CPUS:-2-3}
export BENCH_CLIENT_CPUS=${BENCH_CLIENT_CPUS:-4-7}
python3 bench/replication.py "$wrap/peregrine" --keys "${KEYS:-10000000}" --requests "${REQUESTS:-2000000}" \
    --no-docs --json "$OUT/replication16.json" 2>&1 | tee "$OUT/replication16.log"
rm -rf "$wrap"
