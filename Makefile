# SPDX-License-Identifier: MIT
# Thin wrapper around CMake: make, make demo, make test, make bench.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all build demo test test-asan test-tsan test-valgrind lint stress bench bench-quick fuzz clean

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

# Record the bundled workload as a busy service would run (4 threads, each a steady 20,000
# events/s for 2 s, and signal-handler writers), then show the report: nothing is lost on any
# machine.  The same command is a row of make bench (bench/bench_consumer.c: keep them equal),
# where the full-speed stress is measured too.
DEMO_WORKLOAD = --threads 4 --events 40000 --rate 20000 --signals
demo: build
	@rm -rf $(BUILD)/demo-trace
	$(BUILD)/tracebuf record -o $(BUILD)/demo-trace -- $(BUILD)/tracebuf-workload $(DEMO_WORKLOAD)
	$(BUILD)/tracebuf report $(BUILD)/demo-trace

# Every test; the protocol tier with rseq and with the fallback protocol
# (TRACEBUF_NO_RSEQ=1).  One tier: ctest --test-dir build -L unit (tests/CMakeLists.txt).
# ctest shows no output of a skipped test: the list of skipped tests and the reason each
# printed follows (tests/lib/skip_reasons.sh, from ctest's log).  TEST_ARGS: more ctest options.
TEST_ARGS ?=
test: build
	@{ ctest --test-dir $(BUILD) --output-on-failure -j2 $(TEST_ARGS); echo $$? > $(BUILD)/ctest.rc; } 2>&1 | tee $(BUILD)/ctest.out
	@sh $(CURDIR)/tests/lib/skip_reasons.sh $(BUILD)/ctest.out $(BUILD)/Testing/Temporary/LastTest.log
	@exit $$(cat $(BUILD)/ctest.rc)

test-asan:
	$(MAKE) test BUILD=build-asan CMAKE_FLAGS="-DTB_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug"

# ThreadSanitizer cannot follow rseq critical sections: the fallback protocol
# only (every test but the .rseq variants, and TRACEBUF_NO_RSEQ=1 for the
# tiers that run once; tiers: tests/CMakeLists.txt).
# clang (gcc does not instrument atomic fences); tests/tsan.supp lists the
# deliberate seqlock-style races (copy, then validate) and why.
test-tsan:
	CC=clang cmake -S . -B build-tsan -DTB_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-tsan -j$(JOBS)
	TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp halt_on_error=1" TRACEBUF_NO_RSEQ=1 \
	  ctest --test-dir build-tsan --output-on-failure -j2 -E '\.rseq$$' -LE browser

# valgrind memcheck of the reader and the tools (tests labelled "valgrind").
test-valgrind:
	cmake -S . -B build-valgrind -DTB_VALGRIND=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-valgrind -j$(JOBS)
	ctest --test-dir build-valgrind --output-on-failure -j2 -L valgrind

# Static analysis of src/ and tools/: clang-tidy (.clang-tidy) and cppcheck.
lint:
	tests/lint/run.sh build-lint

# The stress build: injection points on; STRESS_SECONDS=600 make stress
stress:
	cmake -S . -B build-stress -DTB_INJECT=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-stress -j$(JOBS)
	STRESS_SECONDS=$${STRESS_SECONDS:-60} TB_INJECT=$${TB_INJECT:-delay=20,yield=20,signal=5,spin=200} \
	  ctest --test-dir build-stress --output-on-failure -L stress

# Every figure is a ratio against a baseline measured in the same run; docs/BENCHMARKS.md.
bench: build
	$(BUILD)/bench/tracebuf-bench
	TB_CLI=$(BUILD)/tracebuf $(BUILD)/bench/reader/tracebuf-bench-reader

bench-quick: build
	BENCH_QUICK=1 $(BUILD)/bench/tracebuf-bench
	BENCH_QUICK=1 TB_CLI=$(BUILD)/tracebuf $(BUILD)/bench/reader/tracebuf-bench-reader

# Fuzz every parser of untrusted bytes (clang/libFuzzer); FUZZ_SECONDS per target.
fuzz:
	tests/fuzz/run.sh $${FUZZ_SECONDS:-60}

clean:
	rm -rf build build-asan build-tsan build-stress build-valgrind build-lint
