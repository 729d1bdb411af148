# SPDX-License-Identifier: MIT
# t_man_page_and_completion_list_every_command.sh - man/tracebuf.1 renders without a warning,
# and it and the bash completion (completion/tracebuf.bash) know every subcommand that
# `tracebuf --help` lists, and each option a subcommand's --help names (so that adding one
# without documenting it fails here); the completion offers them in a real bash.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
SRC=${TB_SRC:?}
MAN=$SRC/man/tracebuf.1
COMP=$SRC/completion/tracebuf.bash
cmds=$("$CLI" --help | sed -n 's/^  \([a-z]*\) .*/\1/p' | sort -u)
[ -n "$cmds" ] || fail "no command in tracebuf --help"
if command -v man > /dev/null; then
	MANWIDTH=80 man --warnings -l "$MAN" > "$T/man.txt" 2> "$T/man.err" || fail "man -l $MAN"
	[ ! -s "$T/man.err" ] || { cat "$T/man.err"; fail "the man page renders with warnings"; }
else
	echo "man not installed: rendering not checked"
	cp "$MAN" "$T/man.txt"
fi
# offered by the completion, in bash itself
offer() { # offer WORD... : what completing the last word offers
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tracebuf; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$COMP" tracebuf "$@"
}
offered=$(offer "")
for c in $cmds; do
	grep -q "tracebuf $c\|^ *$c\b\|B $c\b" "$MAN" || fail "the man page does not describe '$c'"
	grep -qx "$c" <<< "$offered" || fail "the completion does not offer '$c'"
	# every long option of the subcommand's --help
	opts=$("$CLI" $c --help 2>&1 | grep -E -- '^ +(-[a-zA-Z], )?--[a-z]' | grep -oE -- '--[a-z][a-z-]+' | sort -u)
	copts=$(offer "$c" "--")
	for o in $opts; do
		grep -qx -- "$o" <<< "$copts" || fail "the completion of '$c' does not offer $o"
		grep -q -- "$(sed 's/-/\\\\-/g' <<< "$o")" "$MAN" || grep -q -- "$o" "$T/man.txt" ||
			fail "the man page does not mention $o (tracebuf $c)"
	done
done
[ "$(offer record --mode d)" = discard ] || fail "the completion of --mode"
echo PASS
