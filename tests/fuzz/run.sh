#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/fuzz/run.sh [SECONDS] - build the fuzzers (clang, standalone CMake
# build in $FUZZ_BUILD, default build-fuzz) and run each target for SECONDS
# (default 60) on its committed corpus.  New coverage goes to
# $FUZZ_BUILD/corpus/<target>; a crashing input is copied to
# tests/fuzz/regress/<target>/ (replayed by tests/fuzz/test_reader_fuzz_regress.c)
# and the script exits 1 (map: replayed by tests/fuzz/test_map_fuzz_regress.c).
# FUZZ_JOBS=N runs N workers per target; FUZZ_TARGETS="stream" runs only that one.
set -u
secs=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
command -v clang >/dev/null || { echo "SKIP: clang not installed (apt-get install clang)"; exit 77; }
CC=clang cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
cmake --build "$build" -j"$(nproc)" >/dev/null || { cmake --build "$build"; exit 1; }
fail=0
for t in ${FUZZ_TARGETS:-tsdl stream map}; do
  mkdir -p "$build/corpus/$t" "$build/crash/$t" "$here/regress/$t"
  rm -f "$build/crash/$t"/crash-* "$build/crash/$t"/timeout-* "$build/crash/$t"/leak-* "$build/crash/$t"/oom-*
  echo "== fuzz_$t: ${secs}s"
  jobs=()
  [ "${FUZZ_JOBS:-1}" -gt 1 ] && jobs=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS")
  maxlen=65536
  [ "$t" = map ] && maxlen=131072 # seeds are real session files (tests/fuzz/fuzz_map.c)
  (cd "$build/crash/$t" && "$build/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
      -max_len="$maxlen" -print_final_stats=1 "${jobs[@]}" "$build/corpus/$t" "$here/corpus/$t" 2>&1 |
      grep -E '^(#[0-9]+ +(DONE|INITED)|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|Test unit written)' )
  for c in "$build/crash/$t"/crash-* "$build/crash/$t"/timeout-* "$build/crash/$t"/leak-* "$build/crash/$t"/oom-*; do
    [ -e "$c" ] || continue
    cp "$c" "$here/regress/$t/"
    echo "fuzz_$t: crashing input kept as tests/fuzz/regress/$t/$(basename "$c")"
    fail=1
  done
done
exit $fail
