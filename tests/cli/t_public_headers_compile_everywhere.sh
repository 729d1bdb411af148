# SPDX-License-Identifier: MIT
# t_public_headers_compile_everywhere.sh - <tracebuf/*.h> compile without a warning as C11, C17,
# gnu11 and gnu17 (-Wall -Wextra -Wpedantic -Wshadow -Werror, at -O0 and -O2 where the string warnings
# fire) with gcc and clang, and as C++11, 14, 17 and 20 (-Wall -Wextra -Wpedantic -Wshadow -Werror) with
# g++ and clang++ (tests/headers/every_header.c: every field type, enums with labels, an event
# with one field and one with none; TB_SPAN and TB_SPAN_SCOPE).  A compiler that is not installed is skipped
# and named.  Then the C++ build runs under `tracebuf record` and its events are in the trace with their
# fields (the double in the fewest digits that read back exactly: 0.0005, not 0.00050000000000000001),
# each span's begin with one end.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
SRC=${TB_SRC:?}/tests/headers/every_header.c
INC=$TB_SRC/include
cp "$SRC" "$T/every_header.cpp"
built=0
for cc in gcc clang; do
	command -v $cc > /dev/null || { echo "skipped: $cc not installed"; continue; }
	for std in c11 c17 gnu11 gnu17; do
		for o in -O0 -O2; do
			$cc -std=$std -Wall -Wextra -Wpedantic -Wshadow -Werror $o -I"$INC" -c "$SRC" -o "$T/o.o" 2> "$T/err" ||
				{ cat "$T/err"; fail "$cc -std=$std $o: the public headers do not compile cleanly"; }
			built=$((built + 1))
		done
	done
done
for cxx in g++ clang++; do
	command -v $cxx > /dev/null || { echo "skipped: $cxx not installed"; continue; }
	for std in c++11 c++14 c++17 c++20; do
		for o in -O0 -O2; do
			$cxx -std=$std -Wall -Wextra -Wpedantic -Wshadow -Werror $o -I"$INC" -c "$T/every_header.cpp" -o "$T/o.o" \
				2> "$T/err" || { cat "$T/err"; fail "$cxx -std=$std $o: the public headers do not compile cleanly"; }
			built=$((built + 1))
		done
	done
done
echo "$built compilations clean"
[ $built -gt 0 ] || { echo "SKIP: no compiler"; exit 77; }
CXX=$(command -v g++ || command -v clang++) || { echo "SKIP: no C++ compiler to run the program"; exit 77; }
# a sanitizer build's library needs its runtime in the program too
san=$(sed -n 's/^TB_SANITIZE:STRING=//p' "${TB_BUILD:?}/CMakeCache.txt" 2> /dev/null)
sanflags=${san:+-fsanitize=$san}
if [ -n "$san" ] && ! $CXX $sanflags -x c++ - -o /dev/null <<< 'int main(){}' 2> /dev/null; then
	CXX=$(command -v clang++) || { echo "SKIP: no C++ compiler with -fsanitize=$san"; exit 77; }
fi
$CXX -std=c++17 -O2 $sanflags -I"$INC" "$T/every_header.cpp" -o "$T/prog" -L"$TB_BUILD" -ltracebuf \
	-Wl,-rpath,"$TB_BUILD" || fail "linking the C++ program"
"$CLI" record -q -o "$T/t" -- "$T/prog" || fail "record of the C++ program"
"$CLI" dump "$T/t" > "$T/out" || fail "dump"
cat "$T/out"
grep -q 'hdr:all: { a = 1, b = 2, c = 3, d = 4, e = -1, f = -2, g = -3, h = -4, x = 0.0005, s = "short", t = "short", blob = \[ 115, 104, 111 \], vals = \[ 7, 8 \] }' "$T/out" ||
	fail "hdr:all is not in the trace with its fields"
grep -q 'hdr:typed: { yes = true, no = false, ratio = 0.1, big = -2.5e+38 }' "$T/out" ||
	fail "hdr:typed (bool and f32 fields, floats printed as the shortest text that reads back) is not in the trace"
"$CLI" dump --format json "$T/t" | grep -q '"yes":true,"no":false,"ratio":0.1,"big":-2.5e+38' ||
	fail "dump --format json: hdr:typed's bool and f32 fields"
if command -v babeltrace2 > /dev/null; then
	# CTF 1.8: the bool is an enumeration, shown by its label; the float a 32-bit floating_point
	babeltrace2 "$T/t" > "$T/bt" 2>&1 || { cat "$T/bt"; fail "babeltrace2 reads the trace"; }
	grep 'hdr:typed' "$T/bt" | grep -q 'yes = ( "true" : container = 1 ), no = ( "false" : container = 0 ), ratio = 0.1, big = -2.5e+38' ||
		{ grep hdr:typed "$T/bt"; fail "babeltrace2: hdr:typed's fields"; }
fi
# enum fields: shown by label, a value without one as the number; JSON gives the label as a string
grep -q 'hdr:state: { st = BLOCKED, dir = DOWN }' "$T/out" && grep -q 'hdr:state: { st = 7, dir = UP }' "$T/out" &&
	grep -q 'hdr:state: { st = GONE, dir = UP }' "$T/out" || fail "hdr:state's enum fields are not shown by their labels"
"$CLI" dump --format json "$T/t" | grep -q '"st":"BLOCKED","dir":"DOWN"' || fail "dump --format json: hdr:state's labels"
"$CLI" dump --format json "$T/t" | grep -q '"st":7,"dir":"UP"' || fail "dump --format json: an enum value without a label"
if command -v babeltrace2 > /dev/null; then
	# CTF enumerations with the labels as written: babeltrace2 shows the label and the value
	grep 'hdr:state' "$T/bt" | grep -q 'st = ( "BLOCKED" : container = 5 ), dir = ( "DOWN" : container = 17 )' &&
		grep 'hdr:state' "$T/bt" | grep -q 'st = ( "GONE" : container = -1 )' ||
		{ grep hdr:state "$T/bt"; fail "babeltrace2: hdr:state's enum fields"; }
fi
grep -q 'hdr:one: { id = 42 }' "$T/out" || fail "hdr:one is not in the trace"
grep -q 'hdr:none' "$T/out" || fail "hdr:none (an event without fields) is not in the trace"
# spans (TB_SPAN): the pair, two scoped ones (either return), the C++ class ended early once
[ "$(grep -c 'hdr:phase_begin' "$T/out")" = 4 ] && [ "$(grep -c 'hdr:phase_end' "$T/out")" = 4 ] &&
	[ "$(grep -c 'hdr:bare_begin' "$T/out")" = 2 ] && [ "$(grep -c 'hdr:bare_end' "$T/out")" = 2 ] ||
	fail "TB_SPAN: every begin of hdr:phase and hdr:bare has one end"
grep -q 'hdr:phase_begin: { id = 7, blob = \[ 97, 98, 99 \], what = "scoped" }' "$T/out" ||
	fail "TB_SPAN_SCOPE: hdr:phase_begin's fields"
echo PASS
