# SPDX-License-Identifier: MIT
# t_list_bounds_hostile_elf.sh - `tracebuf list FILE` on the hostile ELF corpus of
# tests/lib/hostile_elf.py (truncated files, sections and tables past the end or wrapping,
# huge declared sizes in sparse files, names without NUL, overlapping tables, escapes in
# names): each answered with a clear error naming the file (exit 1), or listed (exit 0),
# within bounded memory (address space limited with ulimit -v: before, a 4 GiB sparse section
# was mapped and read, 4.2 GB resident) and never printing a control character raw.  The
# symboliser of report --profile and convert --to folded is given a 4 GiB sparse symbol table and
# one past the end of its file: not read, said (before: libdw read it, 31 s, 4.2 GB).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
mkdir "$T/elf"
"${PY:-python3}" "${TB_SRC:?}/tests/lib/hostile_elf.py" "$T/elf" > "$T/cases" || fail "generating the corpus"
[ "$(wc -l < "$T/cases")" -ge 20 ] || fail "the corpus is short"
# the address-space limit: not under a sanitizer (its shadow memory is terabytes of address
# space) nor valgrind
san=$(sed -n 's/^TB_SANITIZE:STRING=//p' "${TB_BUILD:?}/CMakeCache.txt" 2> /dev/null)
limit=
[ -z "$san" ] && [ -z "${TB_UNDER_VALGRIND:-}" ] && limit=262144 # KiB
bad=$(printf '[\001-\010\013-\037\177]')
while read -r name expect; do
	f=$T/elf/$name
	( [ -n "$limit" ] && ulimit -v $limit; exec "$CLI" list --fields "$f" ) > "$T/out" 2> "$T/err"
	rc=$?
	case $expect in
	ok) [ $rc = 0 ] || { cat "$T/err"; fail "$name: exit $rc, want 0"; } ;;
	err | big) [ $rc = 1 ] || { cat "$T/out" "$T/err"; fail "$name: exit $rc, want 1 (a clear error)"; }
	     grep -q "^tracebuf list: .*$name" "$T/err" || { cat "$T/err"; fail "$name: the error does not name the file"; }
	     [ $expect = err ] || grep -q "more than" "$T/err" || { cat "$T/err"; fail "$name: the error does not name the bound"; } ;;
	esac
	if LC_ALL=C grep -q "$bad" "$T/out" "$T/err" || LC_ALL=C grep -qP '\xc2[\x80-\x9f]' "$T/out" "$T/err"; then
		fail "$name: a control character reached the output raw"
	fi
done < "$T/cases"
# the escapes of hostile_names, shown as \xNN
"$CLI" list --fields "$T/elf/hostile_names" > "$T/out" || fail "hostile_names"
grep -qF 'app:\x1b]0;PWN\x07\x1b[2J  {(u32, \x9b1m)}' "$T/out" || { cat "$T/out"; fail "hostile_names not escaped"; }
grep -qF 'app:\xc2\x9b\xff\xed\xa0\x80' "$T/out" || { cat "$T/out"; fail "hostile_names: C1 and ill-formed bytes not escaped"; }
# the symboliser (report --profile, convert --to folded) bounds the same way: a mapped file whose
# symbol table is 4 GiB of holes, or past the end of the file, is not read (said on stderr, its
# addresses shown as file+offset), within the same limit (before: 31 s and 4.2 GB with libdw)
for name in sym_sparse_4g sym_past_eof; do
	"${TB_HOSTILE_TRACE:?}" "$T/p_$name" "$T/elf/$name" > /dev/null || fail "tb-hostile-trace"
	for args in "report --profile" "convert --to folded"; do
		( [ -n "$limit" ] && ulimit -v $limit; exec "$CLI" $args "$T/p_$name" ) > "$T/out" 2> "$T/err"
		rc=$?
		[ $rc = 0 ] || { cat "$T/err"; fail "$args with $name: exit $rc"; }
		grep -q "$name: not read: section 2 .*\(has a hole\|outside the file\)" "$T/err" ||
			{ cat "$T/err"; fail "$args with $name: the refusal is not said"; }
		grep -q "$name+0x100" "$T/out" || { cat "$T/out"; fail "$args with $name: its samples are not shown as file+offset"; }
	done
done
echo PASS
