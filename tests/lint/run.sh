#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh - static analysis of the shipped code (src/, tools/): clang-tidy with
# the checks of .clang-tidy, then cppcheck (warning, performance,
# portability).  `make lint`; CI runs it.  Exit 1 on any finding.
# A false positive is silenced where it is, with the check's name and why:
#   // NOLINT(check): reason        (clang-tidy)
#   // cppcheck-suppress id ; reason (cppcheck)
# Usage: tests/lint/run.sh [BUILD_DIR]   (default build-lint, made here)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build-lint}
case $B in /*) ;; *) B=$PWD/$B ;; esac   # cppcheck's --file-filter needs absolute paths
for t in clang-tidy run-clang-tidy cppcheck; do
  command -v "$t" >/dev/null || { echo "lint: $t not installed (apt-get install clang-tidy cppcheck)"; exit 1; }
done
cmake -S . -B "$B" -DCMAKE_C_COMPILER=clang -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build "$B" -j"$(nproc)" >/dev/null   # generated headers, if any, exist
mapfile -t files < <(git ls-files --cached --others --exclude-standard 'src/*.c' 'tools/*.c' 2>/dev/null || find src tools -name '*.c')
rc=0
echo "== layers (tests/lint/layers.sh)"
tests/lint/layers.sh || rc=1
echo "== clang-tidy (${#files[@]} files)"
if ! run-clang-tidy -quiet -p "$B" -j"$(nproc)" "${files[@]}" > "$B/clang-tidy.log" 2>&1; then
  grep -E 'warning:|error:' "$B/clang-tidy.log" | sort -u || tail -20 "$B/clang-tidy.log"
  rc=1
fi
echo "== cppcheck"
# -D fixes the configuration (x86_64 Linux, what the build uses); with -D
# cppcheck does not define __CPPCHECK__ itself (event.h gives it a plain TB_EVENT).
if ! cppcheck --quiet --project="$B/compile_commands.json" --enable=warning,performance,portability \
     --inline-suppr --error-exitcode=1 -D__x86_64__ -D__linux__ -D__GNUC__ -D__CPPCHECK__ \
     --file-filter='*/src/*' --file-filter='*/tools/*'; then
  rc=1
fi
[ $rc = 0 ] && echo "lint: clean"
exit $rc
