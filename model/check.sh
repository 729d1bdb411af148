#!/bin/bash
# SPDX-License-Identifier: MIT
# model/check.sh [quick|full] - exhaustive check of model/tracebuf.pml with
# Spin (Debian package `spin`, plus gcc).  Exit 0 when every configuration
# verifies with no error (assertions + invalid end states = deadlock) and
# every mutant (a deliberately broken protocol) is caught; 1 otherwise;
# 77 when spin is missing.
#   quick (default, ctest): discard + handler + 1 abort; overwrite + 3 events
#         + 2 aborts; discard + the live-period flusher closing packets on
#         the producers' CPU while they write, and its mutant (a flusher
#         not pinned: must be caught).  ~25 s (half of it compiling pan.c), < 1 GB.
#   full: also 3 more mutants (each must be caught), discard + handler + 2
#         aborts, overwrite + handler + 1 abort, flusher + 2 aborts (~2 min, ~1.5 GB).
set -u
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-quick}
command -v spin >/dev/null || { echo "SKIP: spin not installed (apt-get install spin)"; exit 77; }
command -v gcc >/dev/null || { echo "SKIP: gcc not installed"; exit 77; }
work=$(mktemp -d /tmp/tb-model-XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$here/tracebuf.pml" "$work/"
cd "$work" || exit 1

# run NAME EXPECT(pass|fail) SPIN-DEFINES...
fail=0
run() {
  local name=$1 expect=$2; shift 2
  rm -f pan pan.* tracebuf.pml.trail
  if ! spin -a "$@" tracebuf.pml >spin.log 2>&1; then
    cat spin.log; echo "FAIL: $name: spin -a"; fail=1; return
  fi
  gcc -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c || { echo "FAIL: $name: gcc pan.c"; fail=1; return; }
  local t0=$SECONDS
  ./pan -m1000000 -w24 >pan.log 2>&1
  local errors states
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | tail -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | tail -1)
  if grep -q "max search depth too small\|out of memory" pan.log; then
    echo "FAIL: $name: search incomplete"; grep -E "depth too small|out of memory" pan.log; fail=1; return
  fi
  if [ "$expect" = pass ] && [ "${errors:-x}" = 0 ]; then
    echo "ok: $name: $states states, 0 errors ($((SECONDS - t0)) s)"
  elif [ "$expect" = fail ] && [ "${errors:-0}" != 0 ]; then
    echo "ok: mutant $name caught: $(grep -m1 -E 'assertion violated|invalid end state' pan.log)"
  else
    echo "FAIL: $name: expected $expect, errors=${errors:-?}"
    grep -E "assertion violated|invalid end state" pan.log
    [ -f tracebuf.pml.trail ] && spin -t -p "$@" tracebuf.pml | tail -40
    fail=1
  fi
}

run "discard, 2 producers + signal handler, 1 abort" pass -DABORTS=1
run "overwrite + live snapshot, 2 producers (3 events), 2 aborts" pass -DOVERWRITE -DNOHANDLER -DK0=2 -DABORTS=2
run "discard + live-period flusher on the CPU, 2 producers, 1 abort" pass -DFLUSHER -DNOHANDLER -DABORTS=1
run "flusher not pinned to the producers' CPU" fail -DFLUSHER -DNOHANDLER -DABORTS=1 -DBUG_FLUSH_UNPINNED
if [ "$mode" = full ]; then
  run "snapshot without the sequence re-check" fail -DOVERWRITE -DNOHANDLER -DK0=2 -DABORTS=1 -DBUG_NO_RECHECK
  run "_after stored before st_end" fail -DOVERWRITE -DNOHANDLER -DABORTS=1 -DBUG_ORDER
  run "fast path may end on a sub-buffer boundary" fail -DNOHANDLER -DABORTS=1 -DBUG_BOUNDARY
  run "discard, 2 producers + signal handler, 2 aborts" pass -DABORTS=2
  run "overwrite + live snapshot, 2 producers + signal handler, 1 abort" pass -DOVERWRITE -DABORTS=1
  run "discard + live-period flusher on the CPU, 2 producers, 2 aborts" pass -DFLUSHER -DNOHANDLER -DABORTS=2
fi
exit $fail
