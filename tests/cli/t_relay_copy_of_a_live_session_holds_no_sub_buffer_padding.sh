# SPDX-License-Identifier: MIT
# t_relay_copy_of_a_live_session_holds_no_sub_buffer_padding.sh - the relay daemon's copy of a
# live session holds what the packets hold, not a sub-buffer per packet (docs/FLEET.md, "The
# relay's copy"): the live period closes a quiet program's partial packet every second, and
# lttng-relayd writes a packet's padding as zeros, so a packet sent with the sub-buffer's size
# (256 KiB) cost the collector ~256 KiB per CPU per second (~20 GiB a day per CPU) for a few
# hundred bytes of events.
#   - a paced program (10 events/s for ~4 s, one thread) under `record --relay -o`, the default
#     live period (1 s) and 256 KiB sub-buffers: the local copy holds at least 3 packets closed
#     before they were full;
#   - the relay's stream files hold, after each stream's announcing packet, the local packets
#     with packet_size = content rounded up to 8 bytes (a full one unchanged), headers, content and
#     index entries alike (tests/lib/relay_copy.py --live: a live beacon may move a packet's
#     timestamp_begin forward); so their size is content plus at most 7 bytes per packet, far
#     below one sub-buffer per packet;
#   - babeltrace2 reads the relay's copy with no warning but format 4's expected one, and prints
#     the local copy's events, exactly, with the same discarded counts (bt2_account.py).
# Skips (77) when lttng-relayd or babeltrace2's Python bindings are missing.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/relayd.sh"
. "$(dirname "$0")/../lib/accounting.sh"
command -v lttng-relayd > /dev/null || { echo "SKIP: lttng-relayd not installed (apt-get install lttng-tools)"; exit 77; }
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }
need_bt2
PIDS=
cleanup() {
	for p in $PIDS; do kill -9 "$p" 2> /dev/null; done
	wait 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT

start_relayd "$T/relay-out"
"$CLI" record --relay "net://127.0.0.1:$CP:$DP" --session-name quiet --hostname hostq --live-period 1s \
	--sb-size 256K -o "$T/local" -- "$WL" --threads 1 --events 40 --rate 10 > "$T/w.out" 2> "$T/w.err" ||
	{ cat "$T/w.err"; fail "record --relay"; }
grep -q "packets\{0,1\} (.* events\{0,1\}) not sent" "$T/w.err" && { cat "$T/w.err"; fail "packets were not sent to the relay"; }
R=$(ls -d "$T/relay-out/hostq/quiet-"* 2> /dev/null | head -1)
[ -n "$R" ] || { find "$T/relay-out"; fail "no hostq/quiet-DATE in the relay daemon's output"; }

# the packets the live period closed before they were full, their content, and the relay's bytes
read -r np partial content relay < <("$PY" - "$T/local" "$R" << 'EOF'
import os, struct, sys
np = partial = content = relay = 0
for n in os.listdir(sys.argv[1]):
    if not n.startswith("chan_"):
        continue
    d = open(os.path.join(sys.argv[1], n), "rb").read()
    off = 0
    while off + 160 <= len(d):
        c, p = struct.unpack_from("<QQ", d, off + 120)
        np += 1
        partial += c < p
        content += c // 8
        off += p // 8
    relay += os.path.getsize(os.path.join(sys.argv[2], n))
print(np, partial, content, relay)
EOF
)
echo "  local: $np packets, $partial of them closed partial, $content bytes of content; relay: $relay bytes"
[ "$partial" -ge 3 ] || { cat "$T/w.err"; fail "$partial packets closed partial by the live period, want >= 3 (a 4 s paced program)"; }
nstreams=$(ls "$T/local" | grep -c '^chan_')
[ "$relay" -le $((content + 8 * np + 160 * nstreams)) ] ||
	fail "the relay's stream files hold $relay bytes for $content bytes of content in $np packets" \
		"(one sub-buffer each would be $((np * 262144))): sub-buffer padding"
"$PY" "$(dirname "$0")/../lib/relay_copy.py" "$T/local" "$R" --live || fail "the relay's copy is not the local one, packet by packet"

# babeltrace2: the same events, the same losses, no warning but format 4's expected one
babeltrace2 "$T/local" > "$T/local.txt" 2> "$T/local.err" || { cat "$T/local.err"; fail "babeltrace2 on the local copy"; }
babeltrace2 "$R" > "$T/relay.txt" 2> "$T/relay.err" || { cat "$T/relay.err"; fail "babeltrace2 on the relay's copy"; }
grep -v 'User field found in packet header: ignoring: name="tb_lost_by_cause"' "$T/relay.err" | grep -v '^$' > "$T/relay.other"
[ -s "$T/relay.other" ] && { head "$T/relay.other"; fail "babeltrace2 warned on the relay's copy"; }
[ -s "$T/relay.txt" ] || fail "babeltrace2 prints no event of the relay's copy"
cmp -s "$T/local.txt" "$T/relay.txt" || { diff "$T/local.txt" "$T/relay.txt" | head; fail "babeltrace2 prints other events for the relay's copy"; }
W=$(sed -n 's/^written: //p' "$T/w.out" | tail -1)
ll=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$T/local" "$W") || { echo "$ll"; fail "bt2_account on the local copy"; }
rl=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$R" "$W") || { echo "$rl"; fail "bt2_account on the relay's copy"; }
[ "$ll" = "$rl" ] || fail "the relay's copy: $rl; the local copy: $ll"
echo "  babeltrace2: $(wc -l < "$T/relay.txt") events printed, alike; both copies: $rl"
echo PASS
