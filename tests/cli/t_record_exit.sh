# SPDX-License-Identifier: MIT
# t_record_exit.sh - `tracebuf record` exits with the command's status (128+N for signal N),
# forwards SIGINT/SIGTERM to it like a shell, and still writes a complete trace.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"

"$CLI" record -q -o "$T/e3" -- sh -c 'exit 3'; rc=$?
[ $rc -eq 3 ] || fail "exit 3 gave $rc"
[ -f "$T/e3/metadata" ] || fail "no metadata for a command that wrote nothing"

"$CLI" record -q -o "$T/segv" -- sh -c 'kill -SEGV $$'; rc=$?
[ $rc -eq 139 ] || fail "SIGSEGV gave $rc, want 139"

# the workload writes, then dies of SIGSEGV: what it wrote is in the trace
"$CLI" record -q -o "$T/segv2" -- sh -c "'$WL' --threads 2 --events 20000 > '$T/segv2.out'; kill -SEGV \$\$"; rc=$?
[ $rc -eq 139 ] || fail "SIGSEGV after writing gave $rc, want 139"
w=$(awk '/^written:/{print $2}' "$T/segv2.out")
"$VERIFY" --written "$w" "$T/segv2" || fail "trace of a command killed by SIGSEGV"

# SIGINT / SIGTERM to record: forwarded, CMD dies of it, the trace is complete
# job control on: a non-interactive shell would start background jobs with SIGINT ignored
set -m
for sig in INT TERM; do
	"$CLI" record -q --sb-size 16K --sb-count 4 -o "$T/sig$sig" -- "$WL" --threads 2 --events 4000000 --sleep-us 50 > /dev/null &
	rp=$!
	# signal it once it records (the metadata exists), not after a guess:
	# start-up takes seconds under valgrind or on a loaded machine
	for _ in $(seq 300); do [ -s "$T/sig$sig/metadata" ] && break; sleep 0.1; done
	[ -s "$T/sig$sig/metadata" ] || fail "SIG$sig: record did not start within 30 s"
	sleep 0.2
	kill -$sig $rp
	wait $rp; rc=$?
	want=$((128 + $(kill -l $sig)))
	[ $rc -eq $want ] || fail "SIG$sig: record exited $rc, want $want"
	"$VERIFY" "$T/sig$sig" || fail "SIG$sig: trace invalid"
done
set +m
[ -z "$(ls -A "$T/shm")" ] || fail "session files left behind: $(ls -A "$T/shm")"
echo PASS
