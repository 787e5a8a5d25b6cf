# Thin wrapper over CMake. `make run` and `make test` are all a newcomer needs.
BUILD      ?= build
ASAN_BUILD ?= build-asan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
BENCH      ?=
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
# V=1: show the cmake configure and compiler output as it runs (default:
# in $(BUILD)/build.log, shown only when the build fails).
V          ?= 0

# Debian packages the build, the tests and the REPL need.
DEB_PACKAGES := gcc libc6-dev make cmake pkg-config liblua5.4-dev libyaml-dev \
                libcmocka-dev lua-unit libedit-dev libmicrohttpd-dev \
                graphviz
# Only `make test` needs these: the browser test of `kernbench web`
# (tests/cli/web_cases.sh) drives headless Chromium; the arithmetic
# engine's check (tests/c/engine_flags.sh) builds it with clang as well.
TEST_DEB_PACKAGES := chromium clang
# Only `make fuzz` needs these: clang and its libFuzzer runtime.
FUZZ_DEB_PACKAGES := clang libclang-rt-dev
FUZZ_HARNESSES := topo addr tl_torch
# Only `make test-cluster` needs these: a real single-node SLURM cluster and
# GNU parallel for the sweep backends (tests/cluster/run.sh).
CLUSTER_DEB_PACKAGES := slurm-wlm munge parallel

.PHONY: all deps fuzz-deps build run test test-asan test-cluster conformance fuzz-build fuzz install plots perf perf-scale clean

all: build

# $(call install_debs,PACKAGES): installs the missing ones as root, or
# prints the apt-get line and fails.
define install_debs
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends$$missing; \
	  else \
	    echo "missing Debian packages:$$missing"; \
	    echo "install them as root with:"; \
	    echo "  apt-get install -y --no-install-recommends$$missing"; \
	    exit 1; \
	  fi; \
	fi
endef

# $(call cmake_build,DIR,CONFIGURE_ARGS[,BUILD_ARGS]): configures and builds
# DIR. Quiet unless V=1: the output goes to DIR/build.log and is shown only
# when the configure or the build fails (then the build's without progress
# lines, its last 100 lines).
ifeq ($(V),1)
define cmake_build
	cmake -S . -B $(1) $(2)
	cmake --build $(1) -j $(JOBS) $(3)
endef
else
define cmake_build
	@mkdir -p "$(1)"; log="$(1)/build.log"; \
	if ! cmake -S . -B "$(1)" $(2) >"$$log" 2>&1; then \
	  cat "$$log"; echo "cmake configure failed in $(1)/ (log: $$log)"; exit 1; \
	fi; \
	configured=$$(wc -l <"$$log"); \
	if cmake --build "$(1)" -j $(JOBS) $(3) >>"$$log" 2>&1; then \
	  echo "built $(1)/ (compiler output in $$log; V=1 shows it)"; \
	else \
	  tail -n +$$((configured + 1)) "$$log" \
	    | grep -Ev '^\[ *[0-9]+%\] |^g?make\[[0-9]+\]: (Entering|Leaving) directory' | tail -n 100; \
	  echo "build failed in $(1)/: the full log is $$log (V=1 shows the build as it runs)"; exit 1; \
	fi
endef
endif

deps:
	$(call install_debs,$(DEB_PACKAGES))

fuzz-deps:
	$(call install_debs,$(FUZZ_DEB_PACKAGES))

build: deps
	$(call cmake_build,$(BUILD),-DCMAKE_BUILD_TYPE=Release)

# The main job: the 2-D sharded GEMM on the default topology, checked
# against a CPU reference; `make run BENCH=benches/x.lua` runs another bench.
run: build
	@if [ -n "$(BENCH)" ]; then ./$(BUILD)/bin/kernbench $(BENCH); \
	else ./$(BUILD)/bin/kernbench benches/sharded_gemm.lua --verify-data; fi

test: build
	$(call install_debs,$(TEST_DEB_PACKAGES))
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: deps
	$(call cmake_build,$(ASAN_BUILD),-DCMAKE_BUILD_TYPE=Debug -DKB_SANITIZE=ON)
	$(call install_debs,$(TEST_DEB_PACKAGES))
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

# The sweep backends on a real cluster (docs/sweeps.md, "Backends"): starts a
# single-node SLURM in a temporary directory, runs a 24-point sweep through
# --backend slurm and --backend parallel --sshlogin :, each killed part-way and
# resumed, and compares the results with the local backend's. Needs root.
test-cluster: build
	$(call install_debs,$(CLUSTER_DEB_PACKAGES))
	tests/cluster/run.sh ./$(BUILD)/bin/kernbench

# The SimPy conformance suite (tests/conformance/README.md): regenerates the
# logs with SimPy 3 (Debian's python3-simpy3) and checks them against the
# committed ones, then compares kernbench's output with them, then runs 3000
# random models (random_models.lua) against kernbench and against SimPy itself.
conformance: build
	$(call install_debs,python3-simpy3)
	tests/conformance/simpy.sh
	tests/conformance/check.sh ./$(BUILD)/bin/kernbench
	tests/conformance/random_simpy.sh ./$(BUILD)/bin/kernbench 1 3000

# The libFuzzer harnesses of tests/fuzz, built with clang and ASan + UBSan;
# `make fuzz FUZZ_SECONDS=N` runs each for N seconds on a scratch copy of its
# seed corpus and prints executions, coverage and findings per harness.
fuzz-build: deps fuzz-deps
	$(call cmake_build,$(FUZZ_BUILD),-DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DKB_FUZZ=ON -DKB_BUILD_TESTS=OFF,--target $(addprefix fuzz_,$(FUZZ_HARNESSES)))

fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

# The executable, the Lua library, topologies, kernels and benches, the docs
# (share/doc/kernbench), the man page (man kernbench) and the bash completion.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The GEMM milestone's quick sweep with its PNG plots: installs gnuplot-nox
# when missing, then writes gemm_sweep.csv, efficiency.png and
# stage_breakdown.png to out/milestone_gemm/ (docs/benches.md).
plots: build
	$(call install_debs,gnuplot-nox)
	./$(BUILD)/bin/kernbench -q --param quick=true run milestone-gemm

# Benchmarks of the simulator itself (see docs/PERFORMANCE.md).
perf: build
	./$(BUILD)/bin/perf_event_queue
	bash benches/perf/lua_floor.sh ratio ./$(BUILD)/bin/kernbench ./$(BUILD)/bin/lua_floor
	./$(BUILD)/bin/kernbench benches/perf/chain.lua
	bash benches/perf/chain_limit.sh ratio ./$(BUILD)/bin/kernbench ./$(BUILD)/bin/chain_limit 1024 4096
	./$(BUILD)/bin/kernbench benches/perf/pe_dma.lua --out $(BUILD)/pe_dma --verify
	./$(BUILD)/bin/kernbench -q benches/perf/tl_calls.lua
	./$(BUILD)/bin/handle_pool
	./$(BUILD)/bin/kernbench -q benches/perf/gemm_pipeline.lua
	./$(BUILD)/bin/kernbench -q benches/perf/ipcq_ring.lua
	./$(BUILD)/bin/kernbench -q benches/perf/allreduce_6sip.lua
	./$(BUILD)/bin/kernbench -q benches/perf/llama_layer.lua 1 prefill
	./$(BUILD)/bin/kernbench -q benches/perf/llama_layer.lua 1 decode
	@# the CCL milestone's whole sweep (168 points in worker processes): printed, never checked
	@start=$$(date +%s.%N); ./$(BUILD)/bin/kernbench -q -j 2 --param out=$(BUILD)/milestone_ccl run milestone-ccl \
	  >$(BUILD)/milestone_ccl.log 2>&1 || { cat $(BUILD)/milestone_ccl.log; exit 1; }; \
	  awk -v s=$$start -v e=$$(date +%s.%N) 'BEGIN { printf "milestone-ccl -j 2: %.1f s whole run\n", e - s }'

# The scaling benchmarks over trays of 2 .. 64 SIPs and a million pending
# flits (docs/scaling.md); SCALE_SIPS="2 4 8" picks the tray sizes.
SCALE_SIPS ?= 2 4 8 16 32 64
perf-scale: build
	bash benches/perf/scaling.sh ./$(BUILD)/bin/kernbench $(SCALE_SIPS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
