#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/reader/run.sh [BUILD] [bench_reader args] - builds the reader
# benchmark by hand against BUILD (default build, RelWithDebInfo) and runs
# it; BENCH_QUICK=1 for ~200k events.  Once bench/CMakeLists.txt has
# add_subdirectory(reader), `BUILD/bench/reader/tracebuf-bench-reader` is the same.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target tracebuf_cli tbtest >/dev/null
cc -O2 -g -std=gnu11 -Wall -Wextra -Werror -I"$root/include" -I"$root/src" -I"$root/tests/lib" \
   "$root/bench/reader/bench_reader.c" -o "$build/bench_reader" \
   "$build/tests/libtbtest.a" "$build/libtracebuf_static.a" -lpthread -lm
TB_CLI="$build/tracebuf" exec "$build/bench_reader" "$@"
