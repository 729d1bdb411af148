# SPDX-License-Identifier: MIT
# t_profile_hot_functions_ratio.sh - two functions burning CPU time 3:1 (prof_hot) are the two
# hottest of the samples, at that ratio within 10 points (each sample weighted by 1 + overrun);
# profile:counters agree exactly with the samples and nothing is lost with ample buffers.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"

prof hot -F 999 --sb-size 1M -- "$P/prof_hot" 1.5 || { cat "$T/hot.err"; fail "prof_hot failed"; }
$CHECK hot "$T/hot.json" "$P/prof_hot" || fail "ratio"
$CHECK counters "$T/hot.json" none || fail "counters"
echo PASS
