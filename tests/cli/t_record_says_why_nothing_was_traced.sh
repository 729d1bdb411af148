# SPDX-License-Identifier: MIT
# t_record_says_why_nothing_was_traced.sh - a recording that holds no event says the likely reason
# in one line (issue 26, item 6), with -q too, and a recording that holds events says nothing of
# the kind: a command not linked with libtracebuf (its DT_NEEDED, its symbols), a script whose
# programs never attached, exit status 127 (the loader did not find a library), every class
# filtered away by --events, classes registered but none written.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
why() { grep 'the trace holds no event' "$1"; }

"$CLI" record -o "$T/ls" -- ls / > /dev/null 2> "$T/ls.err" || fail "record ls"
why "$T/ls.err" | grep -q 'ls is not linked with libtracebuf (no DT_NEEDED entry' ||
	{ cat "$T/ls.err"; fail "ls: no reason given"; }
"$CLI" record -q -o "$T/lsq" -- ls / > /dev/null 2> "$T/lsq.err" || fail "record -q ls"
why "$T/lsq.err" | grep -q 'not linked with libtracebuf' || { cat "$T/lsq.err"; fail "-q: the reason is a warning, said anyway"; }

printf '#!/bin/sh\ntrue\n' > "$T/script"
chmod +x "$T/script"
"$CLI" record -q -o "$T/sh" -- "$T/script" 2> "$T/sh.err" || fail "record a script"
why "$T/sh.err" | grep -q 'script is not an ELF program .*no process it started attached' ||
	{ cat "$T/sh.err"; fail "a script: no reason given"; }

"$CLI" record -q -o "$T/e127" -- sh -c 'exit 127' 2> "$T/e127.err"
[ $? -eq 127 ] || fail "exit 127 not passed on"
why "$T/e127.err" | grep -q 'exited with status 127 .*did not find a library' ||
	{ cat "$T/e127.err"; fail "exit 127: no reason given"; }

"$CLI" record -q --events 'nosuch:*' -o "$T/filt" -- "$WL" --events 10 > /dev/null 2> "$T/filt.err" || fail "record --events"
why "$T/filt.err" | grep -q "\-\-events 'nosuch:\*' selected none of the 5 event classes the program registered: workload:" ||
	{ cat "$T/filt.err"; fail "--events filtering every class: no reason given"; }

"$CLI" record -q -o "$T/none" -- "$WL" --events 0 > /dev/null 2> "$T/none.err" || fail "record --events 0"
why "$T/none.err" | grep -q '1 process attached (tracebuf-worklo.*) and registered 5 event classes (workload:.*) but wrote none' ||
	{ cat "$T/none.err"; fail "classes registered, none written: no reason given"; }

"$CLI" record -q -o "$T/some" -- "$WL" --events 10 > /dev/null 2> "$T/some.err" || fail "record the workload"
why "$T/some.err" && fail "a trace with events said it holds none"
echo PASS
