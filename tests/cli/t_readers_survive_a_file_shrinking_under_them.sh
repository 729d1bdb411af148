# SPDX-License-Identifier: MIT
# t_readers_survive_a_file_shrinking_under_them.sh - a stream file truncated by another process
# while `dump` reads it (the readers map their files: the next access to a lost page is a
# SIGBUS) ends the command with a sentence saying so and exit 1, not "Bus error" (exit 135).
# Deterministic: dump writes into a pipe this test reads; once 1 MB is read, dump is blocked on
# the full pipe far before the end of its ~20 MB of output; the file is then cut to 100 KB and
# the rest read: dump's next packets are past the new end.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
"$CLI" record -q --sb-size 64K -o "$T/t" -- "$WL" --threads 1 --events 200000 > /dev/null || fail "record"
f=$(ls -S "$T"/t/chan_* | head -1)
[ "$(stat -c %s "$f")" -gt 2000000 ] || fail "the biggest stream file $f is too small for the test"
"${PY:-python3}" - "$CLI" "$T/t" "$f" > "$T/out" 2> "$T/err" <<'PYEOF'
import os, subprocess, sys
cli, d, f = sys.argv[1:4]
p = subprocess.Popen([cli, "dump", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
got = p.stdout.read(1000000)
if len(got) < 1000000:
    sys.exit(f"dump printed {len(got)} bytes only")
os.truncate(f, 100000)
p.stdout.read()
err = p.stderr.read().decode()
print(p.wait())
sys.stderr.write(err)
PYEOF
rc=$(cat "$T/out")
[ "$rc" = 1 ] || { cat "$T/err"; fail "dump of a file truncated under it: status $rc (want 1; -7 is death by SIGBUS)"; }
grep -q "tracebuf dump: a file being read shrank under it (truncated by another process): stopped" "$T/err" ||
	{ cat "$T/err"; fail "dump does not say why it stopped"; }
echo PASS
