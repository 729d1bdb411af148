# SPDX-License-Identifier: MIT
# relayd.sh - sourced by the tests that run a real lttng-relayd (after recorder_env.sh, with $PY
# set and a PIDS list their cleanup kills):
#   start_relayd OUT   an lttng-relayd writing into OUT (created) on free loopback ports: CP, DP
#                      and LP (control, data, live) set, its pid in RELAYD and added to PIDS.
#   start_fake MODE    tests/tools/fake_relay.py in MODE (stall, noread, drip, garbage, ...) on free
#                      loopback ports: FURL (its URL), FLOG (its log, $T/MODE.log) and FPID set,
#                      its pid added to PIDS.
# The ports are found free, then the daemon binds them: another job may take one in between (the
# daemon exits "Address already in use"), so up to 5 tries with new ones; the daemon is up when
# its control port accepts a connection (a condition, waited for).
start_relayd() {
	mkdir -p "$1"
	local try
	for try in 1 2 3 4 5; do
		read -r CP DP LP < <("$PY" -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
		lttng-relayd --control-port=tcp://127.0.0.1:$CP --data-port=tcp://127.0.0.1:$DP \
			--live-port=tcp://127.0.0.1:$LP --output="$1" > "$T/relayd.log" 2>&1 &
		RELAYD=$!
		PIDS="$PIDS $RELAYD"
		wait_for sh -c "kill -0 $RELAYD 2> /dev/null || exit 0; '$PY' -c \"import socket; socket.create_connection(('127.0.0.1', $CP), 1)\"" 2> /dev/null &&
			kill -0 $RELAYD 2> /dev/null && return 0
	done
	cat "$T/relayd.log"
	fail "lttng-relayd did not start (5 tries)"
}

start_fake() {
	FLOG=$T/$1.log
	: > "$FLOG"
	rm -f "$T/$1.ports"
	"$PY" "$(dirname "${BASH_SOURCE[0]}")/../tools/fake_relay.py" --mode "$1" --ports "$T/$1.ports" --log "$FLOG" &
	FPID=$!
	PIDS="$PIDS $FPID"
	wait_for test -s "$T/$1.ports" || fail "the fake relay ($1) did not start"
	local cp dp
	read -r cp dp < "$T/$1.ports"
	FURL=net://127.0.0.1:$cp:$dp
}
