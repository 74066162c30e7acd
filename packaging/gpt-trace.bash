# bash completion for gpt-trace. The commands come from 'gpt-trace --help' and each command's
# options from 'gpt-trace COMMAND --help', read when completing, so they never drift from the
# program; after 'gpt-trace run [options] --' (or its PROGRAM) the program's own command line is
# completed. Installed as share/bash-completion/completions/gpt-trace.

_gpt_trace_commands()
{
	"$1" --help 2>/dev/null | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\)  *.*/\1/p'
}

# The options in the first column of 'gpt-trace COMMAND --help' ("  -o, --output FILE  ...").
_gpt_trace_options()
{
	"$1" "$2" --help 2>/dev/null | sed -n 's/^ \{2,\}\(-.*\)/\1/p' | sed 's/   *.*//' |
		grep -oE -- '(^|[ ,])--?[A-Za-z0-9][A-Za-z0-9-]*' | tr -d ' ,'
}

# A sub-command word in the usage line: "usage: gpt-trace baseline save ..." gives "save".
_gpt_trace_subcommand()
{
	"$1" "$2" --help 2>/dev/null | sed -n "1s/^usage: gpt-trace $2 \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\1/p"
}

_gpt_trace()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local gpt=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]} i word
	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "$(_gpt_trace_commands "$gpt") --help --version" -- "$cur"))
		return
	fi
	if [[ $cmd == run ]]; then
		# The first word that is not an option (or the one after --) starts the program.
		for ((i = 2; i < COMP_CWORD; i++)); do
			word=${COMP_WORDS[i]}
			if [[ $word == -- ]] || [[ $word != -* && ${COMP_WORDS[i-1]} != @(-o|--output|--api|--commit-ms) ]]; then
				[[ $word == -- ]] && ((i++))
				# bash-completion's _command_offset completes PROGRAM's own arguments too.
				if declare -F _command_offset >/dev/null; then
					_command_offset "$i"
				elif ((i == COMP_CWORD)); then
					COMPREPLY=($(compgen -c -- "$cur"))
				else
					COMPREPLY=($(compgen -f -- "$cur"))
				fi
				return
			fi
		done
		if [[ $prev == --api ]]; then
			COMPREPLY=($(compgen -W "default all none" -- "$cur"))
			return
		fi
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_gpt_trace_options "$gpt" "$cmd")" -- "$cur"))
		return
	fi
	if ((COMP_CWORD == 2)); then
		word=$(_gpt_trace_subcommand "$gpt" "$cmd")
		if [[ -n $word ]]; then
			COMPREPLY=($(compgen -W "$word" -- "$cur"))
			return
		fi
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -o bashdefault -F _gpt_trace gpt-trace
