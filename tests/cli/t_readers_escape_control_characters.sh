# SPDX-License-Identifier: MIT
# t_readers_escape_control_characters.sh - a trace is untrusted input: an event name (or a field
# name, or an environment string) holding control characters, such as a terminal escape that
# sets the window title, reaches no terminal raw.  Every text output (dump, report, list) shows
# them as \xNN; the JSON outputs stay valid JSON. (Identifiers with control characters are
# refused by the metadata lexer: "unexpected byte 0x1b".)
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
"$CLI" record -q -o "$T/t" -- "$WL" --threads 1 --events 5 > /dev/null || fail "record"
"${PY:-python3}" - "$T/t/metadata" <<'PYEOF' || fail "cannot edit the metadata"
import sys
p = sys.argv[1]
s = open(p, "rb").read()
s = s.replace(b"workload:tick", b"work\x1b]0;pwned\x07:tick", 1)
open(p, "wb").write(s)
PYEOF
esc=$(printf '\033')
for cmd in "dump" "report" "list" "dump --format json" "report --format json"; do
	"$CLI" $cmd "$T/t" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "$cmd exited $?"; }
	if grep -q "$esc" "$T/out" "$T/err"; then
		fail "$cmd printed a raw escape character"
	fi
	case $cmd in
	*json*) "${PY:-python3}" -c '
import json, sys
t = open(sys.argv[1]).read().strip()
[json.loads(l) for l in t.split("\n")] if "\n" in t and t[0] == "{" and t.count("\n{") else json.loads(t)' "$T/out" ||
		fail "$cmd output is not valid JSON" ;;
	*) grep -q 'work\\x1b\]0;pwned\\x07:tick' "$T/out" || { head -3 "$T/out"; fail "$cmd does not show the name as \\xNN"; } ;;
	esac
done
echo PASS
