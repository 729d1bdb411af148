# SPDX-License-Identifier: MIT
# bash completion for tracebuf (installed as share/bash-completion/completions/tracebuf)
_tracebuf()
{
	local cur prev cmd
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	local cmds="record snapshot snapshots recover dump report convert profile stat list enable disable"
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}
	# after `--`, a command line: complete commands and files
	local i
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = "--" ]; then
			COMPREPLY=($(compgen -c -f -- "$cur"))
			return
		fi
	done
	case $prev in
	--mode) COMPREPLY=($(compgen -W "discard overwrite block" -- "$cur")); return ;;
	--to) COMPREPLY=($(compgen -W "perfetto chrome speedscope folded" -- "$cur")); return ;;
	--format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
	--unwind) COMPREPLY=($(compgen -W "auto fp libunwind" -- "$cur")); return ;;
	--snapshot-on-signal) COMPREPLY=($(compgen -W "USR1 USR2 RTMIN" -- "$cur")); return ;;
	-o | --output | --shm-dir | --snapshot-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--session | --attach) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--pid) COMPREPLY=($(compgen -W "$(ps -o pid= -u "$(id -u)" 2>/dev/null)" -- "$cur")); return ;;
	esac
	local opts
	case $cmd in
	record) opts="-o --output --channel --sb-size --sb-count --mode --events --flush-period --live-period --watermark
		      --block-timeout --no-attribution --vtid --session --shm-dir --attach --pid --relay --session-name --hostname
		      --live-timer --relay-timeout --trust-writers --snapshot-dir --after --min-interval --max-snapshots --max-size
		      --snapshot-on --scan-period --snapshot-on-signal --no-snapshot-on-crash --snapshot-on-failure --kernel --kernel-all --kernel-pages -f --force -q --quiet --help --" ;;
	snapshot | recover) opts="-o -q --help" ;;
	snapshots) opts="--help" ;;
	dump) opts="--format --event --cpu --tid --from --to --thread-records --utc --epoch --ticks --follow --progress --no-progress -q --quiet --help" ;;
	report) opts="--format --threads --ranges --html --html-events -o --profile --top --follow --interval --no-demangle --progress --no-progress -q --quiet --help" ;;
	convert) opts="--to -o --output --begin --end --max-events --absolute --no-compress --no-demangle --progress --no-progress -q --quiet --help" ;;
	profile) opts="-F --freq -o --output --unwind --depth --channel --events --flush-period --mode --sb-count
		       --sb-size --session --shm-dir --watermark -q --quiet --help --" ;;
	stat) opts="-a --help" ;;
	list) opts="--fields --help" ;;
	enable | disable) opts="--channel --help" ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _tracebuf tracebuf
