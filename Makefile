# Peregrine set-up: `make run` and `make test` install what is missing (Debian
# packages; PyPI for the Python test tools, in .venv), build with CMake + Ninja,
# and run. Everything CI needs is here: .ci/run only calls `make test`.

BUILD      ?= build/release
BUILD_TYPE ?= Release
WERROR     ?= OFF
PYTHON     ?= python3
VENV       := .venv
JOBS       ?= $(shell nproc)
ARGS       ?=

# What building and running need.
BUILD_PACKAGES := cmake ninja-build g++ pkg-config libgtest-dev libxxhash-dev libmimalloc-dev liblzf-dev \
                  libssl-dev libmsgpack-dev dpkg-dev
# What the tests and benchmarks need besides: the real Redis to compare with;
# podman and runc for the container image's tests, systemd for checking the
# unit file (tests/test_shipping_*.py; docs/shipping.md).
TEST_PACKAGES  := python3 python3-venv redis-server redis-tools openssl podman runc systemd
# What the benchmarks need on top.
BENCH_PACKAGES := valgrind libbenchmark-dev libabsl-dev util-linux

.PHONY: all deps client-test-deps lua-src redis-suite bench-script-cost test-deps bench-deps pydeps build run test unit-test integration-test bench-smoke test-asan test-tsan asan-build tsan-build test-sanitizers fuzz-build fuzz fuzz-smoke bench bench-containers bench-lists bench-zsets bench-scripts bench-persistence bench-aof bench-datamodel bench-tls bench-acl bench-notify bench-maxmemory bench-monitor bench-instr bench-cross bench-threads bench-shards bench-replication bench-cluster bench-cluster-migrate bench-pubsub difftest soak bench-expire microbench clean

all: build

# Installs the Debian packages in $(1) that are not there yet (apt runs only if
# needed). Debian starts redis-server as a service when it is installed; the
# tests start their own on a free port, so the service is stopped and disabled
# again, leaving port 6379 free for `make run`.
define install_packages
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing || exit 1; \
	  case "$$missing" in *redis-server*) \
	    (systemctl disable --now redis-server || service redis-server stop) >/dev/null 2>&1 || true;; \
	  esac; \
	fi
endef

deps:
	$(call install_packages,$(BUILD_PACKAGES))
	@$(MAKE) --no-print-directory lua-src

# Lua 5.1 from Debian's source package with the project's own patches
# (patches/lua5.1/, docs/scripting.md), unpacked once for every build
# directory; again when a patch changes.
DEPS_SRC := build/deps-src
lua-src: $(DEPS_SRC)/.ready
$(DEPS_SRC)/.ready: tools/fetch_sources.sh $(wildcard patches/lua5.1/*.patch)
	tools/fetch_sources.sh $(DEPS_SRC)
	@touch $@

test-deps:
	$(call install_packages,$(TEST_PACKAGES))

bench-deps: pydeps
	$(call install_packages,$(BENCH_PACKAGES))
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check -r bench/requirements.txt

# Python test tools from PyPI, in a virtualenv of the project's own.
pydeps: test-deps $(VENV)/.installed
$(VENV)/.installed: tests/requirements.txt
	@[ -x $(VENV)/bin/python ] || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check -r tests/requirements.txt
	@touch $@

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DPEREGRINE_WERROR=$(WERROR)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# Starts the server in the foreground with built-in defaults (127.0.0.1:6379).
run: build
	$(BUILD)/peregrine $(ARGS)

unit-test: build
	$(BUILD)/peregrine_unit_tests --gtest_brief=1

# The black-box suite against four worker threads (more than this
# machine's cores, so that the cross-thread paths always run and
# interleave), cluster tests included (tests/test_cluster*.py: multi-node
# clusters, the clients of other languages through a reshard, mixed
# clusters with Redis), where slots map to several shards. One worker
# thread is the ASan pass's (test-sanitizers); INTEGRATION_THREADS=1 runs
# this pass so, the cluster tests left out. Two test processes at once
# (pytest-xdist): much of the suite waits (replication, failovers,
# timeouts), so two take about 0.6 of the time.
PYTEST := $(VENV)/bin/python -m pytest tests -q -n 2 --dist loadscope --durations=20
CLUSTER_TESTS := $(addprefix --ignore=,$(wildcard tests/test_cluster*.py))
INTEGRATION_THREADS ?= 4
# What TSan's pass leaves out: the clients of other languages, and the
# cluster tests of protocol and interop with Redis (mixed clusters, failover
# modes, hostile bus messages); the other cluster tests run there, where the
# bus's thread, the slot migration's and the workers meet.
TSAN_SKIP := $(addprefix --ignore=tests/,test_cluster_clients.py test_cluster_mixed.py test_cluster_edges.py)
integration-test: build pydeps client-test-deps
	PEREGRINE_BIN=$(abspath $(BUILD))/peregrine PEREGRINE_ARGS="--threads $(INTEGRATION_THREADS)" $(PYTEST) \
	  $(if $(filter 1,$(INTEGRATION_THREADS)),$(CLUSTER_TESTS))

# Their toolchains: Maven and a JDK from Debian if missing; Go (>= 1.26,
# for go-redis 9.23) and Node.js (>= 20, for ioredis 6) are newer than
# Debian 12's, so they must be there already (they are on the machines this
# project runs on), unless PEREGRINE_CLIENT_TESTS=skip-missing (then the
# test skips a client whose toolchain is missing); the modules come from the
# Go proxy, npm and Maven Central.
CLIENT_TEST_TOOLS := mvn:maven javac:default-jdk-headless
client-test-deps:
	@missing=""; for tp in $(CLIENT_TEST_TOOLS); do \
	  command -v $${tp%%:*} >/dev/null 2>&1 || missing="$$missing $${tp#*:}"; \
	done; \
	if [ -n "$$missing" ]; then echo "Installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing || exit 1; fi
	@[ "$$PEREGRINE_CLIENT_TESTS" = skip-missing ] || { \
	  go=$$(command -v go || echo /usr/local/go/bin/go); \
	  minor=$$($$go env GOVERSION 2>/dev/null | sed -n 's/^go1\.\([0-9]*\).*/\1/p'); \
	  [ -n "$$minor" ] && [ "$$minor" -ge 26 ] || { echo "client tests need Go >= 1.26 (Debian's golang-go is 1.19), or PEREGRINE_CLIENT_TESTS=skip-missing"; exit 1; }; \
	  major=$$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null); \
	  [ -n "$$major" ] && [ "$$major" -ge 20 ] && command -v npm >/dev/null || { echo "client tests need Node.js >= 20 with npm (Debian 12's nodejs is 18), or PEREGRINE_CLIENT_TESTS=skip-missing"; exit 1; }; }

# A few seconds: the benchmark harness still runs end to end (not a measurement).
bench-smoke: build pydeps
	$(VENV)/bin/python bench/run_bench.py --smoke $(abspath $(BUILD))/peregrine
	$(VENV)/bin/python bench/containers.py --smoke $(abspath $(BUILD))/peregrine
	$(VENV)/bin/python bench/lists.py --smoke $(abspath $(BUILD))/peregrine
	$(VENV)/bin/python bench/zsets.py --smoke $(abspath $(BUILD))/peregrine
	$(VENV)/bin/python bench/scripts.py --smoke $(abspath $(BUILD))/peregrine
	$(VENV)/bin/python bench/persistence.py --smoke $(abspath $(BUILD))/peregrine
	$(VENV)/bin/python bench/aof.py --smoke $(abspath $(BUILD))/peregrine
	$(VENV)/bin/python bench/datamodel.py --smoke $(abspath $(BUILD))/peregrine
	$(VENV)/bin/python bench/tls.py --smoke $(abspath $(BUILD))/peregrine

# Sanitizer builds, by clang (it compiles them in half gcc's time), Debug
# at -O1 with assertions on. ASan + UBSan is the fuzzers' tree (build/fuzz:
# one build for the fuzz targets, the server and the unit tests, all with
# the fuzzers' coverage instrumentation); it runs the unit tests and the
# black-box suite against one worker thread (the single-worker paths; the
# release pass runs four). ThreadSanitizer (build/tsan) runs the unit tests
# and the black-box suite (the atomicity stress test included) against four
# worker threads: a data race stops the server, and the run stops there
# with its output (conftest.alive). (The cluster tests, a minute of
# multi-node clusters, run under TSan, where the bus's own thread meets the
# workers, and not under ASan: the bus's parsing runs under ASan in its two
# fuzzers.) Each suite runs one test process at a time, unlike
# integration-test: with two, sanitized servers side by side were slow
# enough that timing-bound tests failed now and then. In `make test` the
# two suites run side by side (test-sanitizers): each keeps one core about
# half busy (its servers mostly wait: sleeps, timeouts, replication), so
# together they take the time of one. The differential tests' random
# examples are fewer there (100, 40 and 40): their semantics are the
# release pass's to check.
SAN_CXX    := clang++-14
SAN_PACKAGES := clang-14 libclang-rt-14-dev
FUZZ_BUILD := build/fuzz
ASAN_BUILD := $(FUZZ_BUILD)
TSAN_BUILD := build/tsan
SAN_EXAMPLES := NOTIFYTEST_EXAMPLES=40 TRACKTEST_EXAMPLES=40 DIFFTEST_EXAMPLES=100
ASAN_PYTEST = UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 PEREGRINE_BIN=$(abspath $(ASAN_BUILD))/peregrine PEREGRINE_ARGS="--threads 1" \
  $(SAN_EXAMPLES) $(VENV)/bin/python -m pytest tests -q -p no:cacheprovider --durations=20 --basetemp=$(ASAN_BUILD)/pytest-tmp $(CLUSTER_TESTS)
TSAN_PYTEST = TSAN_OPTIONS=halt_on_error=1 PEREGRINE_BIN=$(abspath $(TSAN_BUILD))/peregrine PEREGRINE_ARGS="--threads 4" \
  $(SAN_EXAMPLES) $(VENV)/bin/python -m pytest tests -q -p no:cacheprovider --durations=20 --basetemp=$(TSAN_BUILD)/pytest-tmp $(TSAN_SKIP)

asan-build: fuzz-build pydeps
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 $(ASAN_BUILD)/peregrine_unit_tests --gtest_brief=1

tsan-build: deps pydeps
	$(call install_packages,$(SAN_PACKAGES))
	CXX=$(SAN_CXX) cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPEREGRINE_WERROR=$(WERROR) -DPEREGRINE_SANITIZE=thread -DPEREGRINE_TESTS=ON -DPEREGRINE_BENCH=OFF
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	TSAN_OPTIONS=halt_on_error=1 $(TSAN_BUILD)/peregrine_unit_tests --gtest_brief=1

test-asan: asan-build
	$(ASAN_PYTEST)

test-tsan: tsan-build
	$(TSAN_PYTEST)

# Both suites side by side, each into its log (shown when it ends); fails
# if either did.
test-sanitizers: asan-build tsan-build
	@echo "ASan and TSan black-box suites, side by side (logs: $(ASAN_BUILD)/pytest.log, $(TSAN_BUILD)/pytest.log)"
	@( $(ASAN_PYTEST) > $(ASAN_BUILD)/pytest.log 2>&1; echo $$? > $(ASAN_BUILD)/pytest.rc ) & a=$$!; \
	 ( $(TSAN_PYTEST) > $(TSAN_BUILD)/pytest.log 2>&1; echo $$? > $(TSAN_BUILD)/pytest.rc ) & t=$$!; \
	 n=0; while kill -0 $$a 2>/dev/null || kill -0 $$t 2>/dev/null; do sleep 5; n=$$((n + 1)); \
	   [ $$((n % 12)) = 0 ] && echo "  $$((n / 12)) min: ASan $$(grep -o '[0-9]*%' $(ASAN_BUILD)/pytest.log | tail -1), TSan $$(grep -o '[0-9]*%' $(TSAN_BUILD)/pytest.log | tail -1)"; \
	 done; wait $$a $$t; \
	 for s in $(ASAN_BUILD) $(TSAN_BUILD); do echo "--- $$s:"; tail -c 60000 $$s/pytest.log; done; \
	 [ "$$(cat $(ASAN_BUILD)/pytest.rc)" = 0 ] && [ "$$(cat $(TSAN_BUILD)/pytest.rc)" = 0 ]

# libFuzzer targets (fuzz/README.md), built by clang with ASan + UBSan in
# the ASan tree (Debug at -O1: assertions on): `connection` (the whole request path), `config`
# (the config file reader and CONFIG GET/SET round trips), `rdb` (RDB
# files and RESTORE payloads), `script` (Lua scripts through EVAL & co.;
# an input stuck for 30 s is a finding), `replica` (what a primary sends
# a replica: handshake replies, snapshot, stream), `cluster_bus` (the
# cluster bus's messages; 16 KB inputs: one message's header is 2256 bytes)
# and `cluster_node` (what those messages do to a node's view of the
# cluster; its inputs are programs that build them).
FUZZ_TARGET ?= connection
FUZZ_FLAGS   = -max_len=$(if $(filter cluster_bus,$(1)),16384,4096) -artifact_prefix=$(FUZZ_BUILD)/artifacts/ -print_final_stats=1 \
               $(if $(wildcard fuzz/$(1).dict),-dict=fuzz/$(1).dict) $(if $(filter script,$(1)),-timeout=30)
FUZZ_SMOKE_SECONDS ?= 30

fuzz-build: deps
	$(call install_packages,$(SAN_PACKAGES))
	CXX=$(SAN_CXX) cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPEREGRINE_WERROR=$(WERROR) -DPEREGRINE_FUZZ=ON -DPEREGRINE_TESTS=ON -DPEREGRINE_BENCH=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@mkdir -p $(addprefix $(FUZZ_BUILD)/corpus/,connection config rdb script replica cluster_bus cluster_node) $(FUZZ_BUILD)/artifacts

# make fuzz SECONDS=N [FUZZ_TARGET=config]: fuzzes for N seconds (default
# 600), starting from the checked-in seeds and what earlier runs found
# (build/fuzz/corpus/, kept); a finding is saved in build/fuzz/artifacts/.
fuzz: fuzz-build
	$(FUZZ_BUILD)/peregrine_$(FUZZ_TARGET)_fuzzer $(call FUZZ_FLAGS,$(FUZZ_TARGET)) -max_total_time=$(SECONDS) \
	  $(FUZZ_BUILD)/corpus/$(FUZZ_TARGET) fuzz/corpus/$(FUZZ_TARGET)

# CI: every checked-in seed and past finding of each target once, then short
# runs from the seeds alone (fresh scratch corpora: CI starts the same way
# every time): FUZZ_SMOKE_SECONDS for the connection, a quarter for config,
# rdb, replica, cluster_bus and cluster_node, half for script.
define fuzz_smoke
	$(FUZZ_BUILD)/peregrine_$(1)_fuzzer $(call FUZZ_FLAGS,$(1)) -runs=0 fuzz/corpus/$(1)
	$(if $(wildcard fuzz/regressions/$(1)/*),$(FUZZ_BUILD)/peregrine_$(1)_fuzzer $(wildcard fuzz/regressions/$(1)/*))
	rm -rf $(FUZZ_BUILD)/smoke/$(1) && mkdir -p $(FUZZ_BUILD)/smoke/$(1)
	$(FUZZ_BUILD)/peregrine_$(1)_fuzzer $(call FUZZ_FLAGS,$(1)) -seed=1 -max_total_time=$(2) $(FUZZ_BUILD)/smoke/$(1) fuzz/corpus/$(1)
endef
fuzz-smoke: fuzz-build
	$(call fuzz_smoke,connection,$(FUZZ_SMOKE_SECONDS))
	$(call fuzz_smoke,config,$(shell expr $(FUZZ_SMOKE_SECONDS) / 4))
	$(call fuzz_smoke,rdb,$(shell expr $(FUZZ_SMOKE_SECONDS) / 4))
	$(call fuzz_smoke,script,$(shell expr $(FUZZ_SMOKE_SECONDS) / 2))
	$(call fuzz_smoke,replica,$(shell expr $(FUZZ_SMOKE_SECONDS) / 4))
	$(call fuzz_smoke,cluster_bus,$(shell expr $(FUZZ_SMOKE_SECONDS) / 4))
	$(call fuzz_smoke,cluster_node,$(shell expr $(FUZZ_SMOKE_SECONDS) / 4))

test: unit-test integration-test bench-smoke fuzz-smoke test-sanitizers

# Peregrine against redis-server side by side (about 10 minutes), then the
# hashes and sets (bench-containers, about 8 more), lists, sorted sets,
# transactions and scripts, persistence; writes docs/benchmarks.md
# and the plots beside it.
bench: build bench-deps
	$(VENV)/bin/python bench/run_bench.py $(abspath $(BUILD))/peregrine
	$(VENV)/bin/python bench/containers.py $(abspath $(BUILD))/peregrine
	$(VENV)/bin/python bench/lists.py $(abspath $(BUILD))/peregrine --rounds 3
	$(VENV)/bin/python bench/zsets.py $(abspath $(BUILD))/peregrine --rounds 3
	$(VENV)/bin/python bench/scripts.py $(abspath $(BUILD))/peregrine --rounds 2
	$(VENV)/bin/python bench/persistence.py $(abspath $(BUILD))/peregrine --keys 10000000 --requests 5000000
	$(VENV)/bin/python bench/aof.py $(abspath $(BUILD))/peregrine --rounds 3

# Persistence against Redis alone (about 10 minutes, 10M keys): SAVE, load,
# BGSAVE idle and under SET load (p99.9, peak memory with the fork's pages
# counted for Redis); a section in docs/benchmarks.md.
bench-persistence: build bench-deps
	$(VENV)/bin/python bench/persistence.py $(abspath $(BUILD))/peregrine --keys 10000000 --requests 5000000

# The append-only file against Redis alone (about 3 minutes): SET at P1
# and P16 without persistence, with everysec and with always (req/s, CPU
# per request); a section in docs/benchmarks.md.
# Streams and HyperLogLog against Redis alone (about 6 minutes): XADD and
# PFADD at P16 and P1, memory per stream entry; a section in docs/benchmarks.md.
bench-datamodel: build bench-deps
	$(VENV)/bin/python bench/datamodel.py $(abspath $(BUILD))/peregrine --rounds 2

bench-aof: build bench-deps
	$(VENV)/bin/python bench/aof.py $(abspath $(BUILD))/peregrine --rounds 3

# Transactions and scripts against Redis alone (about 4 minutes): EVALSHA
# at P1 and P16, MULTI/INCR/INCR/EXEC at P16, with the null server's
# ceiling; a section in docs/benchmarks.md.
bench-scripts: build bench-deps
	$(VENV)/bin/python bench/scripts.py $(abspath $(BUILD))/peregrine --rounds 2

# Sorted sets against Redis alone (about 8 minutes): memory per member,
# redis-benchmark ZADD/ZPOPMIN and ZADD/ZRANGEBYSCORE/ZRANK on a 1M-member
# set, the stall of freeing a 10M-member set; a section in docs/benchmarks.md.
bench-zsets: build bench-deps
	$(VENV)/bin/python bench/zsets.py $(abspath $(BUILD))/peregrine --rounds 3

# Lists and blocking pops against Redis alone (about 10 minutes): memory per
# item, redis-benchmark list commands, a BRPOP/LPUSH queue, the stall of
# freeing a 10M-item list; a section in docs/benchmarks.md.
bench-lists: build bench-deps
	$(VENV)/bin/python bench/lists.py $(abspath $(BUILD))/peregrine --rounds 3

# Hashes and sets against Redis alone (about 8 minutes): memory per element,
# redis-benchmark SADD/HSET/SPOP, HGETALL and SMEMBERS; a section and a plot
# (docs/bench_containers.png) in docs/benchmarks.md.
bench-containers: build bench-deps
	$(VENV)/bin/python bench/containers.py $(abspath $(BUILD))/peregrine

# Instructions per GET and per SET for both servers under callgrind.
# TLS requests/s against redis-server with TLS, P1 and P16 (~4 min).
bench-tls: build bench-deps
	$(VENV)/bin/python bench/tls.py $(abspath $(BUILD))/peregrine --rounds 3

# What the permission check costs per request (callgrind): the default user,
# a restricted one, Redis's same two (BASELINE=an older peregrine binary adds
# the cost before ACL users existed).
bench-acl: build bench-deps
	$(VENV)/bin/python bench/acl_cost.py $(abspath $(BUILD))/peregrine $(if $(BASELINE),--baseline $(BASELINE))

# Keyspace notifications on with nobody subscribed: instructions per SET
# against off (bench/notify_cost.py, a few minutes under callgrind).
bench-notify: build bench-deps
	$(VENV)/bin/python bench/notify_cost.py $(abspath $(BUILD))/peregrine

# What maxmemory costs a SET that evicts nothing (callgrind, SET at P16, no
# maxmemory / allkeys-lru / volatile-lru without deadlines), Peregrine and Redis.
bench-maxmemory: build bench-deps
	$(VENV)/bin/python bench/maxmemory_cost.py $(abspath $(BUILD))/peregrine

# What a MONITOR client costs per request (callgrind, SET/GET at P16, with
# and without one attached), Peregrine and Redis (~5 min).
bench-monitor: build bench-deps
	$(VENV)/bin/python bench/monitor_cost.py $(abspath $(BUILD))/peregrine

# What a script run costs (callgrind, instructions per EVALSHA at P16):
# this binary, Redis, and BASELINE=<another peregrine> when given (~5 min).
bench-script-cost: build bench-deps
	$(VENV)/bin/python bench/script_cost.py $(abspath $(BUILD))/peregrine $(if $(BASELINE),--baseline $(BASELINE))

bench-instr: build bench-deps
	$(VENV)/bin/python bench/instr.py $(abspath $(BUILD))/peregrine

# Requests/s of Redis, --threads 1 and --threads 2 sharing this machine's
# cores with the load generator (~6 min).
bench-threads: build bench-deps
	$(VENV)/bin/python bench/threads.py $(abspath $(BUILD))/peregrine

# Server CPU per GET, --threads 2 on one core vs --threads 1 (issue #37; ~4 min).
bench-shards: build bench-deps
	$(VENV)/bin/python bench/shard_cost.py $(abspath $(BUILD))/peregrine

bench-replication: build bench-deps
	$(VENV)/bin/python bench/replication.py $(abspath $(BUILD))/peregrine

# A cluster of 3 Peregrine primaries against one of 3 redis-server primaries
# (issue #39; ~5 min): redis-benchmark --cluster SET/GET at P16 and P1,
# failover time with replicas after kill -9, redis-cli --cluster reshard
# time; a section in docs/benchmarks.md.
bench-cluster: build bench-deps
	$(VENV)/bin/python bench/cluster.py $(abspath $(BUILD))/peregrine

# A slot holding 1 GB moved while probes use every node (issue #39; ~5 min,
# 4 GB of memory): Peregrine's CLUSTER MIGRATESLOTS against redis-cli
# --cluster reshard on Redis; p99.9 of the probes moving against idle.
bench-cluster-migrate: build bench-deps
	$(VENV)/bin/python bench/cluster_migrate.py $(abspath $(BUILD))/peregrine

# Redis's own test units in external mode (tests/redis_suite/, not in CI:
# ~10 minutes): unit/scripting, unit/functions and unit/multi against
# Debian's redis-server, then against Peregrine with one worker and with
# REDIS_SUITE_THREADS, each compared with Redis's pass count. The suite is
# Debian's redis source package's tests/ (apt-get source, kept in
# build/redis-src); replication's tests are left out (issue #38).
REDIS_SUITE_UNITS   ?= unit/scripting unit/functions unit/multi
REDIS_SUITE_THREADS ?= 4
REDIS_SUITE_OUT     ?= build/redis-suite
build/redis-src/.ready: tools/fetch_sources.sh
	tools/fetch_sources.sh build/redis-src redis
	@touch $@
redis-suite: build test-deps build/redis-src/.ready
	$(call install_packages,tcl)
	$(PYTHON) tests/redis_suite/run.py --server redis-server --tags=-needs:repl --out $(REDIS_SUITE_OUT)/redis $(REDIS_SUITE_UNITS) || true
	for t in 1 $(REDIS_SUITE_THREADS); do \
	  $(PYTHON) tests/redis_suite/run.py --server $(abspath $(BUILD))/peregrine --server-args "--threads $$t" \
	    --tags=-needs:repl --out $(REDIS_SUITE_OUT)/threads$$t --compare $(REDIS_SUITE_OUT)/redis/summary.json \
	    $(REDIS_SUITE_UNITS) || true; \
	done

# Soak (not in CI): SECONDS of mixed load, connection churn and bad input;
# passes if the server keeps answering, RSS stays flat after warm-up (<5%)
# and its log shows nothing alarming (bench/soak.py).
SECONDS ?= 600
soak: build bench-deps
	$(VENV)/bin/python bench/soak.py $(abspath $(BUILD))/peregrine --seconds $(SECONDS)

# What a command costs when its keys live on another thread's shard
# (instructions under callgrind, --threads 2 against --threads 1; ~1 min).
bench-cross: build bench-deps
	$(VENV)/bin/python bench/cross_shard.py $(abspath $(BUILD))/peregrine

# Differential test against redis-server (#6), beyond CI's fixed 500 examples:
# DIFFTEST_EXAMPLES random examples from a fresh seed (printed; DIFFTEST_SEED=<n>
# repeats a run), with 1 and with 4 worker threads (docs/differential.md).
DIFFTEST_EXAMPLES ?= 5000
difftest: build pydeps
	@seed=$${DIFFTEST_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; \
	echo "difftest: DIFFTEST_SEED=$$seed DIFFTEST_EXAMPLES=$(DIFFTEST_EXAMPLES)"; \
	for t in 1 4; do \
	  echo "difftest: --threads $$t"; \
	  PEREGRINE_BIN=$(abspath $(BUILD))/peregrine PEREGRINE_ARGS="--threads $$t" \
	    DIFFTEST_EXAMPLES=$(DIFFTEST_EXAMPLES) DIFFTEST_SEED=$$seed \
	    $(VENV)/bin/python -m pytest tests/test_differential.py -q || exit 1; \
	done

# PUBLISH requests/s with and without subscribers: Redis, --threads 1 and 2.
bench-pubsub: build bench-deps
	$(VENV)/bin/python bench/pubsub.py $(abspath $(BUILD))/peregrine

# 1M keys expiring at the same millisecond: latency of other clients, both servers.
bench-expire: build pydeps
	$(VENV)/bin/python bench/expire_storm.py $(abspath $(BUILD))/peregrine

# Google Benchmark microbenchmarks (the keyspace table against absl and std,
# parser, reply writer), pinned to one core. This VM's speed drifts by 20-100%
# over minutes, so each benchmark runs MICROBENCH_REPS times in a random
# order among the others and the median is what counts (about an hour
# with 3; MICROBENCH_FILTER picks a subset, e.g. 'BM_Lookup.*/1048576$$').
MICROBENCH_REPS ?= 3
MICROBENCH_FILTER ?= .
microbench: bench-deps
	cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DPEREGRINE_TESTS=OFF -DPEREGRINE_BENCH=ON
	cmake --build build/bench -j $(JOBS) --target peregrine_microbench
	taskset -c 1 build/bench/peregrine_microbench --benchmark_filter='$(MICROBENCH_FILTER)' \
	  --benchmark_enable_random_interleaving=true --benchmark_repetitions=$(MICROBENCH_REPS) \
	  --benchmark_display_aggregates_only=true

# Shipping (issue #41, docs/shipping.md). `make install` puts the server
# (and its check tools, links to it), peregrine.conf and the systemd unit
# under $(DESTDIR)$(PREFIX); the config goes to /etc when PREFIX is /usr,
# else to $(PREFIX)/etc, and an existing one is kept. The unit's paths
# follow PREFIX. `make install-strip` installs the server without its debug
# sections. `make deb` builds build/deb/peregrine_<version>_<arch>.deb with
# dpkg-deb; `make image` the container image from scratch (no registry;
# IMAGE_TARGET=debian builds it on debian:bookworm-slim instead).
PREFIX          ?= /usr/local
DESTDIR         ?=
SYSCONFDIR      ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
INSTALL_PROGRAM ?= install -m 0755
IMAGE           ?= localhost/peregrine:latest
IMAGE_TARGET    ?= scratch
IMAGE_PACKAGES  := podman
.PHONY: install install-strip deb image
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(SYSCONFDIR)/peregrine $(DESTDIR)$(PREFIX)/lib/systemd/system
	$(INSTALL_PROGRAM) $(BUILD)/peregrine $(DESTDIR)$(PREFIX)/bin/peregrine
	ln -sf peregrine $(DESTDIR)$(PREFIX)/bin/peregrine-check-rdb
	ln -sf peregrine $(DESTDIR)$(PREFIX)/bin/peregrine-check-aof
	@[ -e $(DESTDIR)$(SYSCONFDIR)/peregrine/peregrine.conf ] && \
	  echo "keeping $(DESTDIR)$(SYSCONFDIR)/peregrine/peregrine.conf (the new one is peregrine.conf here)" || \
	  install -m 0644 peregrine.conf $(DESTDIR)$(SYSCONFDIR)/peregrine/peregrine.conf
	sed -e 's|/usr/bin/peregrine|$(PREFIX)/bin/peregrine|g' -e 's|/etc/peregrine|$(SYSCONFDIR)/peregrine|g' \
	  packaging/peregrine.service > $(DESTDIR)$(PREFIX)/lib/systemd/system/peregrine.service
	@echo "The unit runs the server as user peregrine in /var/lib/peregrine (docs/shipping.md says how to make them)."

install-strip:
	$(MAKE) --no-print-directory install INSTALL_PROGRAM="install -s -m 0755"

deb: build
	$(call install_packages,dpkg-dev)
	packaging/build-deb.sh $(BUILD)/peregrine build/deb

image: build
	$(call install_packages,$(IMAGE_PACKAGES))
	packaging/stage-image.sh $(BUILD)/peregrine build/image
	cp Containerfile build/image/Containerfile
	@if command -v podman >/dev/null; then \
	  echo podman build --format docker --target $(IMAGE_TARGET) -t $(IMAGE) build/image; \
	  podman build --format docker --target $(IMAGE_TARGET) -t $(IMAGE) build/image; \
	else \
	  echo buildah bud --format docker --target $(IMAGE_TARGET) -t $(IMAGE) build/image; \
	  buildah bud --format docker --target $(IMAGE_TARGET) -t $(IMAGE) build/image; \
	fi

clean:
	rm -rf build
