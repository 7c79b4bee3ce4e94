# bash completion for iotrace(8): subcommands, options, and their values (files, users,
# processes, disks in /sys/block, cgroup v2 directories). Self-contained: it needs bash
# only, not the bash-completion package. tests/test_install.py checks that each mode's
# option lists equal what `iotrace MODE --help` lists.

_iotrace_opts_run='-o --output --json -T --no-time --time-all -H --no-hist -s --summary -p --pid -u --user
	--max-procs --sync --prom-file --files --wide --files-by --trace --trace-min --trace-interval
	--trace-max-events --stacks --stacks-by --stacks-unwind -v --verbose -? --help --usage
	-V --version'
_iotrace_opts_snoop='-p --pid -c --cgroup --container -d --disk -Q --queue -j --json -v --verbose
	-? --help --usage -V --version'
_iotrace_opts_compare='-D --drop-caches -n --repeat -l --label -j --json -o --output -? --help
	--usage -V --version'
_iotrace_opts_serve='--listen -c --cgroup --container --comm -T --no-time --time-all --max-labels -u --user -v
	--verbose -? --help --usage -V --version'
_iotrace_opts_top='-d --delay -n --iterations -b --batch -j --json -c --cgroup --container --group --comm -o
	--sort --no-time --max-procs -v --verbose -? --help --usage -V --version'
_iotrace_opts_info='-j --json -v --verbose -? --help --usage -V --version'
_iotrace_opts_containers='-a --all -j --json -? --help --usage -V --version'
# Options that take a value, per mode.
_iotrace_args_run='-o --output -p --pid -u --user --max-procs --prom-file --files --files-by --trace
	--trace-min --trace-interval --trace-max-events --stacks --stacks-by --stacks-unwind'
_iotrace_args_snoop='-p --pid -c --cgroup --container -d --disk'
_iotrace_args_compare='-n --repeat -l --label -o --output'
_iotrace_args_serve='--listen -c --cgroup --container --max-labels -u --user'
_iotrace_args_top='-d --delay -n --iterations -c --cgroup --container --group -o --sort --max-procs'
_iotrace_args_info=''
_iotrace_args_containers=''

# cgroup v2 directories, as paths below the mount point (with the leading slashes typed),
# or as full paths when the word starts with the mount point.
_iotrace_cgroups()
{
	local cur=$1 root lead
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts 2>/dev/null)
	[[ -n $root ]] || return 0
	if [[ $cur == "$root"* ]]; then
		mapfile -t COMPREPLY < <(compgen -d -S / -- "$cur")
	else
		lead=${cur%%[!/]*}
		mapfile -t COMPREPLY < <(cd "$root" && compgen -d -P "$lead" -S / -- "${cur#"$lead"}")
	fi
	compopt -o nospace 2>/dev/null
}

# Completes the value of option $1 for the word $2.
_iotrace_value()
{
	local opt=$1 cur=$2
	case $opt in
	-o | --output | --prom-file | --trace | --stacks)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		;;
	-u | --user)
		mapfile -t COMPREPLY < <(compgen -u -- "$cur")
		;;
	-p | --pid)
		mapfile -t COMPREPLY < <(compgen -W "$(cd /proc && echo [0-9]*)" -- "$cur")
		;;
	-d | --disk)
		mapfile -t COMPREPLY < <(compgen -W "$(ls /sys/block 2>/dev/null)" -- "$cur")
		;;
	-c | --cgroup)
		_iotrace_cgroups "$cur"
		;;
	--container) # the running containers' names, as iotrace resolves them
		mapfile -t COMPREPLY < <(compgen -W "$(iotrace containers -j 2>/dev/null |
			sed -n 's/.*"name":"\([^"]*\)".*/\1/p')" -- "$cur")
		;;
	--listen)
		mapfile -t COMPREPLY < <(compgen -W '127.0.0.1:9435 [::1]:9435' -- "$cur")
		;;
	--files)
		mapfile -t COMPREPLY < <(compgen -W 'all 10 20 50' -- "$cur")
		;;
	--files-by)
		mapfile -t COMPREPLY < <(compgen -W 'path file' -- "$cur")
		;;
	--stacks-by)
		mapfile -t COMPREPLY < <(compgen -W 'calls bytes time' -- "$cur")
		;;
	--stacks-unwind)
		mapfile -t COMPREPLY < <(compgen -W 'fp dwarf' -- "$cur")
		;;
	--trace-min | --trace-interval)
		mapfile -t COMPREPLY < <(compgen -W '0 100us 1ms 10ms 100ms' -- "$cur")
		;;
	*)
		COMPREPLY=() # a number or a name: nothing to offer
		;;
	esac
}

# Index of the word where run mode's command starts (after -- or at the first operand),
# or 0 while the words before COMP_CWORD are all options.
_iotrace_command_start()
{
	local args=$1 i w
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == -- ]]; then
			echo $((i + 1))
			return
		elif [[ $w == = ]]; then
			((i++)) # --opt=value: the value follows
		elif [[ " $args " == *" $w "* && ${COMP_WORDS[i + 1]} != = ]]; then
			((i++)) # -o FILE
		elif [[ $w != -* ]]; then
			echo $i
			return
		fi
	done
	echo 0
}

_iotrace()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} mode=run first=1
	local opts args start i
	# --opt=value: bash splits it at '=' (COMP_WORDBREAKS).
	if [[ $cur == = ]]; then
		cur=
	elif [[ $prev == = ]]; then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	case ${COMP_WORDS[1]} in
	snoop | compare | serve | info | top | containers)
		mode=${COMP_WORDS[1]} first=2
		;;
	esac
	opts=_iotrace_opts_$mode args=_iotrace_args_$mode
	opts=${!opts} args=${!args}

	if [[ $mode == run ]]; then
		start=$(_iotrace_command_start "$args")
		if ((start == COMP_CWORD)); then
			mapfile -t COMPREPLY < <(compgen -c -- "$cur")
			return 0
		elif ((start > 0)); then
			compopt -o default 2>/dev/null # the command's own arguments
			COMPREPLY=()
			return 0
		fi
	elif [[ $mode == compare ]]; then
		for ((i = first; i < COMP_CWORD; i++)); do
			[[ ${COMP_WORDS[i]} == -- ]] && return 0 # quoted shell command lines
		done
	fi
	if [[ $mode == top ]] && ((COMP_CWORD > first)); then
		case $prev in
		-o | --sort) # top's -o is its sort key, -d its delay
			mapfile -t COMPREPLY < <(compgen -W 'pid name read write hit dread dwrite io uring' -- "$cur")
			return 0
			;;
		--group)
			mapfile -t COMPREPLY < <(compgen -W 'process cgroup container pod' -- "$cur")
			return 0
			;;
		-d | --delay | -n | --iterations | --max-procs)
			return 0
			;;
		esac
	fi
	if ((COMP_CWORD > first)) && [[ " $args " == *" $prev "* ]]; then
		_iotrace_value "$prev" "$cur"
	elif [[ $mode == run && $cur != -* ]]; then
		# iotrace [OPTIONS] CMD: a command, or at first a mode
		((COMP_CWORD == 1)) && mapfile -t COMPREPLY < <(compgen -W 'snoop compare serve top info containers fields' -- "$cur")
		mapfile -t -O ${#COMPREPLY[@]} COMPREPLY < <(compgen -c -- "$cur")
	elif [[ $mode == containers && $cur != -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(cd /proc && echo [0-9]*)" -- "$cur")
	elif [[ $cur == -* || $mode == serve || $mode == info || $mode == top ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
	fi
	return 0
}

complete -F _iotrace iotrace
