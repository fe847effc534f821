#!/bin/sh
# Issue #37's many-core measurement in one call on a borrowed machine with nothing
# installed (the device tool): bench/scale.py over the bundle in .scale, then the
# ordering and atomicity tests with real parallelism (4 and 8 workers on 16 cores).
# Prepare here first:
#   python3 bench/scale.py bundle .scale build/release/peregrine \
#       --tool memtier_benchmark=PATH --tool valkey-server=PATH
#   (plus .scale/peregrine-run, a wrapper for the tests, and redis-py's wheel in .whl)
# Results go to $OUT (scale16.json, scale16.log, tests.log; perf-*.txt with
# EXTRA="--perf .scale/bin/perf --perf-server KINDS --perf-workload get1,getP").
set -u
OUT=${OUT:-/tmp/scale-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 bench/scale.py run --bundle .scale --server-cores "${SERVER_CORES:-8}" --client-threads "${CLIENT_THREADS:-8}" \
    --secs "${SECS:-8}" --servers "${SERVERS:-redis,rcluster,valkey,peregrine1,peregrineN}" \
    --json "$OUT/scale16.json" ${EXTRA:-} 2>&1 | tee "$OUT/scale16.log"
if [ -n "${TESTS-tests/test_pipeline_order.py tests/test_atomicity.py}" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site PEREGRINE_BIN="$PWD/.scale/peregrine-run" timeout 180 \
        python3 -m pytest ${TESTS-tests/test_pipeline_order.py tests/test_atomicity.py} -q -p no:cacheprovider \
        > "$OUT/tests.log" 2>&1
    echo "tests rc $?"; tail -15 "$OUT/tests.log"
fi
