# SPDX-License-Identifier: MIT
# t_profile_emitting_program_keeps_its_callers.sh - a program that spends most of its time in
# tracebuf's own code (prof_emit: main emits events in a loop) is profiled with every unwinder:
# at least 99 % of the periods sampled have main in their chain. Samples that land in an rseq
# critical section are delivered at its abort handler (the kernel moves the IP there first),
# which must unwind as the function that runs the cs; samples at the first or last
# instructions of a libtracebuf function must find its caller with frame pointers.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"

unwinders="fp"
if has_libunwind; then unwinders="fp libunwind"; else echo "libunwind not built: fp only"; fi
for u in $unwinders; do
	# (not prof(): no JSON dump of the millions of events)
	"$CLI" profile -q -o "$T/emit_$u" -F 999 --unwind "$u" --sb-size 1M -- "$P/prof_emit" 1 \
		> "$T/emit_$u.out" 2> "$T/emit_$u.err" || { cat "$T/emit_$u.err"; fail "prof_emit failed ($u)"; }
	"$CLI" convert "$T/emit_$u" --to folded -o "$T/emit_$u.folded" 2> "$T/emit_$u.cerr" ||
		fail "convert --to folded ($u): $(cat "$T/emit_$u.cerr")"
	# "process;root;...;leaf COUNT": the periods with main among the frames
	awk -v u="$u" '{ w = $NF; t += w; if ($0 ~ /(^|;)main(;| )/) m += w }
		END {
			printf "%s: %d of %d periods have main (%.2f %%)\n", u, m, t, t ? 100 * m / t : 0
			exit !(t >= 300 && m * 100 >= t * 99)
		}' "$T/emit_$u.folded" || {
		awk '$0 !~ /(^|;)main(;| )/' "$T/emit_$u.folded" | sort -k2 -n -r | head -5
		fail "$u: fewer than 99 % of the samples (or under 300 periods) have main in their chain"
	}
done
echo PASS
