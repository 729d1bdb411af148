# SPDX-License-Identifier: MIT
# flight.sh - sourced by the flight recorder's tests (after recorder_env.sh):
#   FW                       the tb_trigger() writer (tests/tools/flight_writer.c)
#   snapshots DIR            the snapshot directories of DIR, oldest first (one per line)
#   snap_events SNAP         babeltrace2's text of SNAP/trace; fails on any babeltrace2 warning
#   snap_check SNAP WRITTEN  babeltrace2 (its Python bindings) finds WRITTEN == delivered +
#                            discarded in SNAP/trace (check_accounting), tb-verify-free
FW=${TB_FLIGHT_WRITER:?}
snapshots() { find "$1" -mindepth 1 -maxdepth 1 -type d -name '[0-9][0-9][0-9][0-9][0-9][0-9]-*' | sort; }
snap_events() {
	babeltrace2 "$1/trace" > "$T/bt.out" 2> "$T/bt.err" || { cat "$T/bt.err"; fail "babeltrace2 cannot read $1"; }
	# the one line babeltrace2 prints for every trace of format 4 (the loss causes
	# in the packet header, docs/CTF.md "Losses by cause") is expected; any other is not
	! grep -v 'User field found in packet header: ignoring: name="tb_lost_by_cause"' "$T/bt.err" | grep -q . ||
		{ cat "$T/bt.err"; fail "babeltrace2 warned on $1"; }
	cat "$T/bt.out"
}
json_field() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$1" "$2"; }
