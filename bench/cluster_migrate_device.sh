#!/bin/sh
# Issue #39's slot-migration figure on a borrowed many-core machine with
# nothing installed (the device tool), in one call: bench/cluster_migrate.py
# --spread over the binaries bundled in .scale (bench/scale.py bundle:
# peregrine, redis-server, redis-cli and their libraries), each of the three
# nodes of a cluster on a core of its own and each probe too, which two
# cores cannot give (docs/cluster.md, "Atomic slot migration"). Run it here
# first with small figures, e.g.
#   BENCH_SERVER_CPUS=0 BENCH_CLIENT_CPUS=1 MB=50 OUT=/tmp/asm-out sh bench/cluster_migrate_device.sh
# (one CPU each: then without --spread). Results go to $OUT
# (cluster_migrate16.json, cluster_migrate16.log).
set -u
OUT=${OUT:-/tmp/asm-out}
mkdir -p "$OUT"
. "$(dirname "$0")/device_wrap.sh"
export BENCH_SERVER_CPUS=${BENCH_SERVER_CPUS:-0-2} BENCH_CLIENT_CPUS=${BENCH_CLIENT_CPUS:-3-6}
spread=--spread
[ "$(echo "$BENCH_SERVER_CPUS" | tr -cd ',-')" = "" ] && spread=
python3 bench/cluster_migrate.py "$wrap/peregrine" --mb "${MB:-1024}" --rounds "${ROUNDS:-2}" $spread --no-docs \
    --json "$OUT/cluster_migrate16.json" 2>&1 | tee "$OUT/cluster_migrate16.log"
rm -rf "$wrap"
