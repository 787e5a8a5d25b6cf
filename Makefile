# Thin wrapper over CMake. `make run` and `make test` are all a newcomer needs.
BUILD      ?= build
ASAN_BUILD ?= build-asan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
BENCH      ?=

# Debian packages the build, the tests and the REPL need.
DEB_PACKAGES := gcc libc6-dev make cmake pkg-config liblua5.4-dev libyaml-dev \
                libcmocka-dev lua-unit libedit-dev libopenblas-serial-dev

.PHONY: all deps build run test test-asan install perf clean

all: build

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
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

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

# The main job: the 2-D sharded GEMM on the default topology, checked
# against a CPU reference; `make run BENCH=benches/x.lua` runs another bench.
run: build
	@if [ -n "$(BENCH)" ]; then ./$(BUILD)/bin/kernbench $(BENCH); \
	else ./$(BUILD)/bin/kernbench benches/sharded_gemm.lua --verify-data; fi

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DKB_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# Benchmarks of the simulator itself (see docs/PERFORMANCE.md).
perf: build
	./$(BUILD)/bin/perf_event_queue
	./$(BUILD)/bin/kernbench benches/perf/lua_processes.lua
	./$(BUILD)/bin/kernbench benches/perf/chain.lua
	KB_OUT_DIR=$(BUILD) ./$(BUILD)/bin/kernbench benches/perf/pe_dma.lua
	./$(BUILD)/bin/kernbench -q benches/perf/tl_calls.lua
	./$(BUILD)/bin/kernbench -q benches/perf/gemm_pipeline.lua

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
