# SPDX-License-Identifier: MIT
# relayd.sh - sourced by the tests that run a real lttng-relayd (after recorder_env.sh, with $PY
# set and a PIDS list their cleanup kills):
#   start_relayd OUT   an lttng-relayd writing into OUT (created) on free loopback ports: CP, DP
#                      and LP (control, data, live) set, its pid in RELAYD and added to PIDS.
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
