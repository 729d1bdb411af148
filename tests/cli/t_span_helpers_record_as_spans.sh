# SPDX-License-Identifier: MIT
# t_span_helpers_record_as_spans.sh - TB_SPAN and TB_SPAN_SCOPE (include/tracebuf/event.h) in a
# C program (gcc/clang: the cleanup attribute) and a C++ program (the RAII class), recorded:
# every span is closed by its own end, also when its scope is left by an early return, and in
# C++ by an exception and by an explicit end() (once); `convert --to chrome`, `convert --to
# perfetto` and `report --html` show each as a span with the trace's begin and end to the ns
# (tests/lib/spans_check.py compares them with `dump --format json`).  A program that is not
# recorded writes nothing and runs the same (the disabled path).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
INC=$TB_SRC/include
CHECK="python3 $TB_SRC/tests/lib/spans_check.py"
command -v python3 > /dev/null || { echo "SKIP: python3 not installed"; exit 77; }
CC=$(command -v gcc || command -v clang) || { echo "SKIP: no C compiler"; exit 77; }
CXX=$(command -v g++ || command -v clang++) || { echo "SKIP: no C++ compiler"; exit 77; }
# a sanitizer build's library needs its runtime in the programs too
san=$(sed -n 's/^TB_SANITIZE:STRING=//p' "${TB_BUILD:?}/CMakeCache.txt" 2> /dev/null)
sanflags=${san:+-fsanitize=$san}
LINK="-L$TB_BUILD -ltracebuf -Wl,-rpath,$TB_BUILD"

cat > "$T/spans.c" << 'EOF'
#include <stdio.h>
#include <tracebuf/event.h>

TB_SPAN(sc, outer, (u32, id), (str, what))
TB_SPAN(sc, inner)

static int inner(unsigned i)
{
	TB_SPAN_SCOPE(sc, inner);
	if (i % 2)
		return 1; /* an early return closes it too */
	return 0;
}

int main(void)
{
	int odd = 0;
	for (unsigned i = 0; i < 4; i++) {
		TB_SPAN_SCOPE(sc, outer, i, "loop");
		odd += inner(i);
		if (i == 3)
			break; /* leaving the block by break closes it */
	}
	tb_sc_outer_begin(99, "pair"); /* the explicit pair */
	tb_sc_outer_end();
	printf("odd %d\n", odd);
	return 0;
}
EOF
cat > "$T/spans.cpp" << 'EOF'
#include <cstdio>
#include <stdexcept>
#include <tracebuf/event.h>

TB_SPAN(sx, request, (u32, id), (str, path))
TB_SPAN(sx, step)

static void step(uint32_t i)
{
	TB_SPAN_SCOPE(sx, step);
	if (i == 2)
		throw std::runtime_error("step 2 fails"); /* unwinding closes both spans */
}

static int handle(uint32_t id)
{
	TB_SPAN_SCOPE(sx, request, id, "/x");
	if (id == 1)
		return 1; /* an early return */
	step(id);
	return 0;
}

int main()
{
	int caught = 0;
	for (uint32_t i = 0; i < 4; i++) {
		try {
			handle(i);
		} catch (const std::exception &) {
			caught++;
		}
	}
	{
		tb_sx_step_scope s; /* named: ended early, once */
		s.end();
		s.end();
	}
	std::printf("caught %d\n", caught);
	return caught == 1 ? 0 : 1;
}
EOF
$CC -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 $sanflags -I"$INC" "$T/spans.c" -o "$T/c" $LINK ||
	fail "building the C program"
$CXX -std=c++17 -Wall -Wextra -Wpedantic -Werror -O2 $sanflags -I"$INC" "$T/spans.cpp" -o "$T/cxx" $LINK ||
	fail "building the C++ program"
[ "$("$T/c")" = "odd 2" ] && [ "$("$T/cxx")" = "caught 1" ] || fail "the programs do not run the same unrecorded"

have_protoc=0
command -v protoc > /dev/null && have_protoc=1 || echo "protoc not installed: the Perfetto file is not decoded"
for p in c cxx; do
	echo "== $p"
	"$CLI" record -q -o "$T/t$p" -- "$T/$p" > "$T/out" || fail "record of the $p program"
	"$CLI" dump --format json "$T/t$p" > "$T/$p.jsonl" || fail "dump"
	"$CLI" convert "$T/t$p" --to chrome -o "$T/$p.json" 2> "$T/err" || { cat "$T/err"; fail "convert --to chrome"; }
	grep -q "0 unmatched ends (kept as instants), 0 spans closed at the trace end, 0 closed by an outer end" "$T/err" ||
		{ cat "$T/err"; fail "$p: convert --to chrome found spans not closed by their own end"; }
	"$CLI" convert "$T/t$p" --to chrome --absolute -o "$T/$p.abs.json" 2> /dev/null || fail "convert --to chrome --absolute"
	"$CLI" report -q --html -o "$T/$p.html" "$T/t$p" || fail "report --html"
	args="$T/$p.jsonl --chrome $T/$p.json --chrome $T/$p.abs.json --html $T/$p.html"
	if [ $have_protoc = 1 ]; then
		"$CLI" convert "$T/t$p" --to perfetto -o "$T/$p.pftrace" 2> /dev/null || fail "convert --to perfetto"
		python3 "$TB_SRC/tests/lib/perfetto_check.py" slices "$TB_SRC/tests/perfetto" "$T/$p.pftrace" > "$T/$p.slices" ||
			{ cat "$T/$p.slices"; fail "decoding the Perfetto file"; }
		args="$args --perfetto $T/$p.slices"
	fi
	if [ $p = c ]; then
		# i = 0..3 (the loop left by break at 3) and the explicit pair; inner once per outer of the loop
		$CHECK $args --expect sc:outer=5 --expect sc:inner=4 || fail "the C program's spans"
	else
		# 4 requests (1 returned early, 2 left by the exception), steps of 0, 2, 3 and the named one
		$CHECK $args --expect sx:request=4 --expect sx:step=4 || fail "the C++ program's spans"
	fi
done
# the fields go with the begin
grep -q '"event":"sc:outer_begin","fields":{"id":3,"what":"loop"}' "$T/c.jsonl" || fail "sc:outer_begin's fields"
grep -q '"event":"sx:request_begin","fields":{"id":2,"path":"/x"}' "$T/cxx.jsonl" || fail "sx:request_begin's fields"
# request 2: its step threw; unwinding ended the step, then the request
grep -A3 '"event":"sx:request_begin","fields":{"id":2,' "$T/cxx.jsonl" | sed -n 's/.*"event":"\([^"]*\)".*/\1/p' |
	tr '\n' ' ' | grep -qx 'sx:request_begin sx:step_begin sx:step_end sx:request_end ' ||
	fail "the exception did not end the step, then the request"
echo PASS
