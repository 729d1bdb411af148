# SPDX-License-Identifier: MIT
# t_record_direct_io.sh - the recorder writes runs of full packets with direct I/O where the file
# system takes it (issue 14: no second copy of every byte into the page cache), through the page
# cache where it does not or when told to (TRACEBUF_NO_DIRECT_IO=1), and the trace is as good
# either way: whole packets, zeros after every packet's content (a hole, or a direct write's
# padding: never a reused sub-buffer's stale bytes), every event accounted by babeltrace2 and by
# our readers.  Sub-buffers of 64 KiB (several per system call), 256 KiB and 4 MiB (one), rings
# that wrap, streams that start after losses (an empty packet first, which keeps the packets after
# it aligned), and last packets that are partial (a hole after a direct write).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
need_bt2

# Does this file system do direct I/O at all?  (tmpfs before Linux 6.6 does not: the recorder
# must then fall back to the page cache, and say 0 %.)
dio=1
dd if=/dev/zero of="$T/probe" bs=4096 count=1 oflag=direct 2> /dev/null || dio=0
echo "direct I/O in $T: $([ $dio = 1 ] && echo yes || echo "no (the page cache path only)")"

pct() { sed -n 's/.*(\([0-9]*\) % with direct I\/O, .*/\1/p' "$1"; }

check() { # NAME: the recording's exit, its summary, the trace
	local name=$1 rc=$2 want=$3 w p
	[ "$rc" -eq 0 ] || { cat "$T/err"; fail "$name: record exited $rc"; }
	w=$(sed -n 's/^written: //p' "$T/out")
	p=$(pct "$T/err")
	[ -n "$p" ] || { cat "$T/err"; fail "$name: the summary does not say how much went with direct I/O"; }
	echo "$name: $p % with direct I/O"
	case $want in
	some) [ "$p" -gt 0 ] || { cat "$T/err"; fail "$name: nothing written with direct I/O on a file system that takes it"; } ;;
	none) [ "$p" -eq 0 ] || fail "$name: $p % with direct I/O where it is off" ;;
	esac
	"$VERIFY" --written "$w" "$T/$name" || fail "$name: the trace is not whole and exact"
	check_accounting "$T/$name" "$w" "$T/err"
}

want=$([ $dio = 1 ] && echo some || echo none)
# A paced producer (a recorder under valgrind keeps up with it): whatever the machine, the
# recorder never falls behind here, so direct I/O is what it uses where the file system takes it.
"$CLI" record --sb-size 64K --sb-count 4 -o "$T/paced" -- "$WL" --threads 2 --events 100000 --sleep-us 100 \
	> "$T/out" 2> "$T/err"
check paced $? $want

# 2 full-speed threads into 4 sub-buffers: the rings wrap (stale bytes to leak), are full at
# times (the recorder then lets the page cache take a run: any share of direct I/O is right)
for sb in 256K 4M; do
	"$CLI" record --sb-size $sb --sb-count 4 -o "$T/d$sb" -- "$WL" --threads 2 --events 200000 \
		> "$T/out" 2> "$T/err"
	check "d$sb" $? any
done

# block mode: nothing lost, whichever way the packets went.  The longest block timeout (10 s):
# the default (100 ms) is a latency bound a slow build may exceed (the recorder under valgrind
# took 1.7 s of CPU here and a producer timed out once); a loss with 10 s means a sub-buffer was
# not freed for 10 s, a defect in any build.
"$CLI" record --mode block --block-timeout 10s --sb-size 128K --sb-count 4 -o "$T/block" -- "$WL" --threads 2 --events 200000 \
	> "$T/out" 2> "$T/err"
check block $? any
grep -q "lost 0 events" "$T/err" || { cat "$T/err"; fail "block: events lost"; }

# off when told: the same recording through the page cache only
TRACEBUF_NO_DIRECT_IO=1 "$CLI" record --sb-size 256K --sb-count 4 -o "$T/nodio" -- "$WL" --threads 2 \
	--events 200000 > "$T/out" 2> "$T/err"
check nodio $? none
echo PASS
