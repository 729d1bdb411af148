#!/bin/bash
# SPDX-License-Identifier: MIT
# compare_bt2.sh DIR - check that `tracebuf dump` and babeltrace2 read trace DIR
# the same way: same events in the same order, same field values, same
# discard notices (and counts).  Also checks that babeltrace2 itself reads DIR
# without error.  Exit 0 same, 1 different, 77 babeltrace2/python3-bt2 missing.
# Env: TB_CLI (tracebuf binary), default: tracebuf in PATH.
set -u
dir=$1
cli=${TB_CLI:-tracebuf}
here=$(cd "$(dirname "$0")" && pwd)
command -v babeltrace2 >/dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }
py=
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import bt2' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with the bt2 module (apt-get install python3-bt2)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! babeltrace2 "$dir" >"$tmp/bt2.txt" 2>"$tmp/bt2.err"; then
  echo "babeltrace2 failed on $dir:"; cat "$tmp/bt2.err"; exit 1
fi
"$cli" dump --format json --thread-records "$dir" >"$tmp/dump.jsonl" 2>"$tmp/dump.err"
rc=$?
if [ $rc -ne 0 ]; then
  echo "tracebuf dump exited $rc on $dir:"; cat "$tmp/dump.err"; exit 1
fi
"$py" "$here/compare_bt2.py" "$dir" "$tmp/dump.jsonl"
