# SPDX-License-Identifier: MIT
# t_record_disk_full.sh - a recording cut by a full disk says so: the recorder exits non-zero
# and names the file, the trace ends at a whole packet, and the trace itself tells every reader
# how many events it lost to the disk (a last "loss packet" written in the room the recorder
# kept for it): babeltrace2 finds written == delivered + discarded, with the cause "disk".
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
need_bt2
M=$T/small
mkdir "$M"
# A file system of its own, small enough to fill whatever the consumer's speed: tmpfs (needs
# root, or a user namespace).  Its size is the recorder's reserve (4 KiB per possible CPU +
# 256 KiB, see tb_ballast_make) + 256 KiB for metadata and packets.  Even a consumer that drains
# nothing until the command ends (valgrind, a loaded machine) then has one full discard-mode ring
# (8 x 64 KiB = 512 KiB) to write: the disk fills on every machine, not only on a fast one.
ncpu=$(getconf _NPROCESSORS_CONF)
if ! mount -t tmpfs -o size=$((ncpu * 4 + 512))k tmpfs "$M" 2> "$T/mount.err"; then
	echo "SKIP: cannot mount a small tmpfs to fill ($(cat "$T/mount.err")); run as root"
	exit 77
fi
trap 'umount "$M" 2> /dev/null; rm -rf "$T"' EXIT

for mode in discard overwrite; do
	echo "== $mode"
	rm -rf "${M:?}"/*
	"$CLI" record --mode $mode --sb-size 64K --sb-count 8 -o "$M/t" -- "$WL" --threads 2 --events 400000 \
		> "$T/out" 2> "$T/err"
	rc=$?
	w=$(sed -n 's/^written: //p' "$T/out")
	grep -i "no space\|cannot write" "$T/err" | head -2
	if [ $mode = discard ]; then
		# 400,000 events (~11 MB) cannot fit: recording failed, the command did not
		[ $rc -eq 1 ] || { cat "$T/err"; fail "record exited $rc on a full disk (want 1)"; }
		grep -q "No space left" "$T/err" || { cat "$T/err"; fail "the error does not say the disk is full"; }
		check_accounting "$M/t" "$w" "$T/err"
		"$PY" "$(dirname "$0")/../lib/bt2_account.py" "$M/t" | grep -q "causes=.*disk:" ||
			fail "the losses to the disk are not in the trace"
	else
		# a flight recorder writes only its last snapshot (8 x 64K per CPU): it may fit or not
		[ $rc -eq 0 ] || [ $rc -eq 1 ] || { cat "$T/err"; fail "record exited $rc"; }
		check_accounting "$M/t" "$w" "$T/err"
	fi
	[ ! -e "$M/t/.tracebuf-reserve" ] || fail "the reserve file was left in the trace"
done
echo PASS
