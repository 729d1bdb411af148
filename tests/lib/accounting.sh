# SPDX-License-Identifier: MIT
# accounting.sh - sourced by the recorder's shell tests (after recorder_env.sh):
# check_accounting DIR WRITTEN [RECORDER_STDERR]
#   babeltrace2 (its Python bindings: tests/lib/bt2_account.py, none of our code)
#   finds WRITTEN == delivered + discarded in trace DIR, with no "count unknown"
#   and the causes adding up; `tracebuf report --format json` and
#   `tracebuf dump --format json` show the same totals by cause; and, given the
#   recorder's stderr, its summary says the same ("lost N events: cause n, ...").
# Prints babeltrace2's line; fails the test (fail()) otherwise.  Needs $PY (set
# by need_bt2, which exits 77 when babeltrace2's bindings are missing).
need_bt2() {
	PY=
	for p in /usr/bin/python3 python3; do
		if "$p" -c 'import bt2' 2> /dev/null; then PY=$p; break; fi
	done
	[ -n "$PY" ] || { echo "SKIP: no python3 with the bt2 module (apt-get install python3-bt2)"; exit 77; }
	export PY
}

check_accounting() {
	local dir=$1 written=$2 rec_err=${3:-} here line
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	line=$("$PY" "$here/bt2_account.py" "$dir" "$written") || { echo "$line"; fail "babeltrace2 on $dir: the identity does not hold"; }
	echo "  babeltrace2: $line"
	local bt_disc bt_causes
	bt_disc=$(sed -n 's/.* discarded=\([0-9]*\) .*/\1/p' <<< "$line")
	bt_causes=$(sed -n 's/.* causes=\(.*\)$/\1/p' <<< "$line")
	# tracebuf report --format json: lost.events and lost.by_cause
	"$CLI" report --format json "$dir" > "$T/acc.report.json" 2> /dev/null || fail "report on $dir"
	local rep
	rep=$("$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))["lost"]
c = ",".join("%s:%d" % (k, v) for k, v in sorted(r["by_cause"].items()) if v) or "none"
print(r["events"], c, r["cause_unknown"], r["notices_count_unknown"])' "$T/acc.report.json") || fail "report json of $dir"
	[ "$rep" = "$bt_disc $bt_causes 0 0" ] || fail "report says '$rep', babeltrace2 '$bt_disc $bt_causes 0 0'"
	# tracebuf dump --format json: the loss notices and their causes
	"$CLI" dump --format json "$dir" 2> /dev/null | "$PY" -c '
import json, sys
n = 0; causes = {}; unknown = 0
for l in sys.stdin:
    o = json.loads(l)
    if "discarded_events" in o:
        if o["discarded_events"] is None or o.get("causes") is None:
            unknown += 1; continue
        n += o["discarded_events"]
        for k, v in o["causes"].items(): causes[k] = causes.get(k, 0) + v
print(n, ",".join("%s:%d" % (k, v) for k, v in sorted(causes.items()) if v) or "none", unknown)' > "$T/acc.dump" ||
		fail "dump json of $dir"
	[ "$(cat "$T/acc.dump")" = "$bt_disc $bt_causes 0" ] || fail "dump says '$(cat "$T/acc.dump")', babeltrace2 '$bt_disc $bt_causes 0'"
	if [ -n "$rec_err" ]; then
		# "  lost N events: ring full 3, overwritten 5" ("lost 1 event: ...") (labels of cli_loss_label())
		local sum
		sum=$(sed -n 's/^  lost \([0-9]*\) events\{0,1\}.*/\1/p' "$rec_err" | tail -1)
		[ "$sum" = "$bt_disc" ] || { cat "$rec_err"; fail "the recorder said lost '$sum', the trace says $bt_disc"; }
		local rc_causes
		rc_causes=$(sed -n 's/^  lost [0-9]* events\{0,1\}: //p' "$rec_err" | tail -1 | "$PY" -c '
import sys
key = {"ring full": "full", "too big": "toobig", "overwritten": "overwritten", "block timeout": "timeout",
       "busy": "busy", "no consumer": "noconsumer", "invalid": "invalid", "disk": "disk", "relay": "relay"}
out = {}
for part in sys.stdin.read().strip().split(", "):
    if part:
        label, n = part.rsplit(" ", 1)
        out[key[label]] = int(n)
print(",".join("%s:%d" % (k, v) for k, v in sorted(out.items()) if v) or "none")')
		[ "$rc_causes" = "$bt_causes" ] || { cat "$rec_err"; fail "the recorder said causes '$rc_causes', the trace '$bt_causes'"; }
		! grep -q "does not account for" "$rec_err" || { cat "$rec_err"; fail "the recorder's own identity check failed"; }
	fi
}
