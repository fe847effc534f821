#!/bin/sh
# Every many-core figure the issues wait on, in one call of the device tool
# (a borrowed 16-core machine with nothing installed, a few minutes a session):
#   1. #37's scaling: bench/scale_device.sh (8 server cores, memtier on 8);
#   2. #39's slot migration of a 1 GB slot: bench/cluster_migrate_device.sh;
#   3. #38's replication at 10M keys: bench/replication_device.sh;
#   4. the ordering and atomicity tests with real parallelism.
# Each step gets at most what is left of BUDGET seconds (and its own cap), and
# what a step leaves running is killed before the next one starts, so that the
# call ends inside the tool's limit and a cut step spoils nothing after it.
# Prepare here (the .scale bundle and .whl are git-ignored, so carry them):
#   python3 bench/scale.py bundle .scale build/release/peregrine --without perf \
#       --tool memtier_benchmark=PATH --tool valkey-server=PATH
#   plus .scale/peregrine-run and redis-py's wheel in .whl (bench/scale_device.sh)
# then run: sh bench/device_all.sh, carrying .scale and .whl. Results in $OUT.
# STEPS="migrate tests" runs only those steps.
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
export OUT
t0=$(date +%s)
now() { echo $(( $(date +%s) - t0 )); }
step() {  # NAME CAP COMMAND...
    name=$1 cap=$2
    shift 2
    case " ${STEPS:-scale migrate replication tests} " in *" $name "*) ;; *) return ;; esac
    left=$(( ${BUDGET:-560} - $(now) ))
    if [ "$left" -lt 30 ]; then echo "== $name: skipped, $left s left"; return; fi
    [ "$cap" -lt "$left" ] || cap=$left
    echo "== $name: up to $cap s, from $(now) s"
    timeout -k 5 "$cap" "$@"
    echo "== $name: rc $? at $(now) s"
    pkill -9 -f '\.scale/(bin|lib)/' 2>/dev/null
    pkill -9 -f "memtier_benchmark|redis-benchmark|bench/(scale|cluster_migrate|replication)\.py" 2>/dev/null
    sleep 1
}
echo "machine: $(nproc) CPUs, $(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2), $(free -g | awk "/Mem:/ {print \$2}") GiB, cpu0 siblings $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null)"
step scale "${SCALE_CAP:-190}" env SECS="${SECS:-6}" TESTS= sh bench/scale_device.sh
step migrate "${MIGRATE_CAP:-170}" env ROUNDS="${ROUNDS:-2}" sh bench/cluster_migrate_device.sh
step replication "${REPLICATION_CAP:-150}" sh bench/replication_device.sh
step tests 70 env SECS=0 SERVERS= TESTS="tests/test_pipeline_order.py tests/test_atomicity.py" sh -c '
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl &&
    PYTHONPATH=/tmp/site PEREGRINE_BIN="$PWD/.scale/peregrine-run" python3 -m pytest $TESTS -q -p no:cacheprovider \
        > "$OUT/tests.log" 2>&1; echo "tests rc $?"; tail -5 "$OUT/tests.log"'
echo "done at $(now) s"
