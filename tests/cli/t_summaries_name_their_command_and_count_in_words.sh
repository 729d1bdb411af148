# SPDX-License-Identifier: MIT
# t_summaries_name_their_command_and_count_in_words.sh - `profile` prints its summary as
# `tracebuf profile:` (not `tracebuf record:`, the command it runs), and counts of one read
# "1 event", "1 packet", not "1 events", "1 packets" (issue 26, item 7).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"

# profile: not in a sanitizer build (its sampler library, preloaded into the workload,
# would need the sanitizer's runtime first); the plain build checks it
if ! grep -q "^TB_SANITIZE:STRING=." "${TB_BUILD:?}/CMakeCache.txt" 2> /dev/null; then
	"$CLI" profile -o "$T/p" -- "$WL" --events 100 > /dev/null 2> "$T/p.err" || { cat "$T/p.err"; fail "profile"; }
	grep -q '^tracebuf profile: [0-9]* events\{0,1\}, .* written to' "$T/p.err" || { cat "$T/p.err"; fail "profile's summary does not name profile"; }
	grep -q 'tracebuf record' "$T/p.err" && { cat "$T/p.err"; fail "profile's messages say record"; }
fi

"$CLI" record -o "$T/one" -- "$WL" --events 1 --threads 1 > /dev/null 2> "$T/one.err" || fail "record 1 event"
grep -q '^tracebuf record: 1 event, .* in 1 packet written to' "$T/one.err" || { cat "$T/one.err"; fail "1 event in 1 packet: $(grep '^tracebuf record:' "$T/one.err")"; }
grep -q 'lost 0 events' "$T/one.err" || fail "0 events: plural"
grep -q ', 1 packet$' "$T/one.err" || { cat "$T/one.err"; fail "per-ring line: 1 packet"; }
"$CLI" convert "$T/one" --to chrome -o "$T/one.json" 2> "$T/c.err" || fail "convert"
grep -q 'tracebuf convert: 1 event -> .*: 0 spans, 1 instant, 0 loss notices' "$T/c.err" || { cat "$T/c.err"; fail "convert's summary: $(cat "$T/c.err")"; }
# a grep of the tools' sources: no count printed before a fixed plural noun in the
# messages this test does not run
src=${TB_SRC:?}/tools
bad=$(grep -nE '(PRIu64|%zu|%u|%s) " ?(events|packets|samples|spans|instants|lanes|frames)\b' "$src"/record_report.c "$src"/cmd_snapshot.c \
	"$src"/convert_*.c "$src"/report_html.c "$src"/cli_convert.c 2> /dev/null)
[ -z "$bad" ] || fail "counts with a fixed plural: $bad"
echo PASS
