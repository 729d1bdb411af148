# SPDX-License-Identifier: MIT
# t_make_test_says_why_tests_skip.sh - `make test` ends with each skipped test and the reason
# it printed (README: "skips, and says why"), which ctest's own output leaves out; its exit
# status is still ctest's.  Run on a small CMake project of three tests (passes, skips with a
# reason, skips without one) through the project's Makefile (BUILD= that project's build).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
SRC=${TB_SRC:?}
for t in make cmake ctest; do command -v $t > /dev/null || { echo "SKIP: $t not installed"; exit 77; }; done
mkdir "$T/proj"
cat > "$T/proj/CMakeLists.txt" <<'CEOF'
cmake_minimum_required(VERSION 3.20)
project(skips NONE)
enable_testing()
add_test(NAME passes COMMAND sh -c "echo fine")
add_test(NAME skips_saying_why COMMAND sh -c "echo 'SKIP: frobnicator not installed (apt-get install frob)'; exit 77")
add_test(NAME skips_silently COMMAND sh -c "exit 77")
set_tests_properties(skips_saying_why skips_silently PROPERTIES SKIP_RETURN_CODE 77)
CEOF
cmake -S "$T/proj" -B "$T/b" > /dev/null || fail "cmake"
make --no-print-directory -C "$SRC" test BUILD="$T/b" > "$T/out" 2>&1; rc=$?
[ $rc -eq 0 ] || { cat "$T/out"; fail "make test exited $rc with no failed test"; }
grep -q '2 skipped tests, and why' "$T/out" || { cat "$T/out"; fail "no list of skipped tests"; }
grep -q '^  skips_saying_why: SKIP: frobnicator not installed (apt-get install frob)$' "$T/out" ||
	{ cat "$T/out"; fail "the reason of a skipped test is not shown"; }
grep -q '^  skips_silently: (no reason printed' "$T/out" || { cat "$T/out"; fail "a skip without a reason is not called out"; }
grep -q 'passes:' "$T/out" && fail "a passed test listed as skipped"
# a failure is still make test's failure
cat >> "$T/proj/CMakeLists.txt" <<'CEOF'
add_test(NAME fails COMMAND sh -c "exit 1")
CEOF
cmake -S "$T/proj" -B "$T/b" > /dev/null || fail "cmake"
make --no-print-directory -C "$SRC" test BUILD="$T/b" > "$T/out" 2>&1 && fail "make test succeeded with a failed test"
grep -q 'skips_saying_why: SKIP: frobnicator' "$T/out" || fail "no skip reasons when a test failed"
echo PASS
