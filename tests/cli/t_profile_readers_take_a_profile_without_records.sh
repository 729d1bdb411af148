# SPDX-License-Identifier: MIT
# t_profile_readers_take_a_profile_without_records.sh - a profile trace whose metadata declares
# the profile classes but which holds no record at all (data/profile_without_records: a
# `tracebuf profile --events '!profile:*'` of a program that emitted nothing; the fuzzer of issue
# 25 found the same with every record damaged) is read by every reader of profiles without
# undefined behaviour: report --profile, report --html, convert --to folded / speedscope /
# chrome / perfetto. Under the ASan+UBSan build (halt on the first report) the old
# qsort(NULL, 0) in cli_profile.c aborted each of them.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"

D=$T/p
cp -r "$(dirname "$0")/data/profile_without_records" "$D"
run() { # EXPECTED-STATUSES DESCRIPTION ARGS...: no sanitizer report, an exit status in the list
	local want=$1 what=$2 rc
	shift 2
	"$CLI" "$@" > "$T/out" 2> "$T/err"
	rc=$?
	if grep -q "runtime error\|AddressSanitizer" "$T/err"; then
		cat "$T/err" >&2
		fail "$what: sanitizer report"
	fi
	case " $want " in *" $rc "*) ;; *) cat "$T/err" >&2; fail "$what: exit $rc, want one of $want" ;; esac
}
run "0" "report --profile" report --profile "$D"
grep -q "0 samples" "$T/out" || fail "report --profile does not say there are no samples: $(cat "$T/out")"
run "0 1" "report --html" report --html -o "$T/r.html" "$D"
for to in folded speedscope chrome perfetto; do
	run "0 1" "convert --to $to" convert "$D" --to "$to" -o "$T/c.$to"
done
echo PASS
