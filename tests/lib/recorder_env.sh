# SPDX-License-Identifier: MIT
# recorder_env.sh - sourced by the recorder's shell tests: the binaries under
# test, a private directory $T (removed at exit unless the test sets its own
# trap) with a private session directory, and fail().
CLI=${TB_CLI:?}; WL=${TB_WORKLOAD:?}; VERIFY=${TB_VERIFY:?}
[ -x "$VERIFY" ] || { echo "SKIP: $VERIFY not built"; exit 77; }
T=$(mktemp -d /tmp/tbrec-XXXXXX); trap 'rm -rf "$T"' EXIT
mkdir -m 700 "$T/shm"; export TRACEBUF_SHM_DIR=$T/shm
fail() { echo "FAIL: $*" >&2; exit 1; }
# wait_for CMD...: until CMD succeeds (a condition, never a time); a hang guard of ~150 s, well
# above anything a loaded machine or a sanitizer build needs (and the recorder's longest relay
# reconnection back-off, 30 s).  Returns 1 when the guard ran out.
wait_for() {
	for _ in $(seq 3000); do "$@" && return 0; sleep 0.05; done
	return 1
}
# said_or_ended TEXT FILE PID: FILE says TEXT, or PID has ended (a wait_for condition that
# cannot hang on a process that died without saying it)
said_or_ended() { grep -q "$1" "$2" || ! kill -0 "$3" 2>/dev/null; }
# wait_said TEXT FILE PID WHY: until FILE says TEXT (or PID ended); fails with WHY if it did not
wait_said() { wait_for said_or_ended "$1" "$2" "$3"; grep -q "$1" "$2" || { cat "$2"; fail "$4"; }; }
