package main

import (
	"fmt"
	"io"
	"strings"
)

// writeZshCompletion writes the zsh script: what the bash script
// completes (writeBashCompletion), with zsh's own file completion (which
// offers every file when no *.json matches) and a description beside
// each command, subcommand and option.
func writeZshCompletion(w io.Writer, specs []completionSpec) {
	var commandDescs, subDescs, optionCases []string
	for _, s := range specs {
		desc := zshQuote(fmt.Sprintf("%s  -- %s", strings.TrimPrefix(s.name, "fleet-"), firstSentence(s.summary)))
		if strings.HasPrefix(s.name, "fleet-") {
			subDescs = append(subDescs, desc)
		} else {
			commandDescs = append(commandDescs, desc)
		}
		descs := make([]string, 0, len(s.flags))
		for _, f := range s.flags {
			descs = append(descs, zshQuote(fmt.Sprintf("%s  -- %s", f, s.help[f])))
		}
		optionCases = append(optionCases, fmt.Sprintf("    %s) descs=(%s) ;;", s.name, strings.Join(descs, " ")))
	}
	r := strings.NewReplacer(
		"@COMMAND_DESCS@", strings.Join(commandDescs, " "),
		"@FLEET_SUB_DESCS@", strings.Join(subDescs, " "),
		"@OPTION_DESCS@", strings.Join(optionCases, "\n"),
	)
	script := strings.NewReplacer("@SCAN_WORDS@", scanWords("words", "2", "CURRENT"), "@CASE_FUNCTIONS@", caseFunctions).Replace(zshCompletionScript)
	shellReplacer(specs).WriteString(w, r.Replace(script))
}

// zshQuote quotes s for zsh (and any POSIX shell): in single quotes,
// each single quote inside closing them, escaped, and opening them again.
func zshQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const zshCompletionScript = `#compdef netagent
# zsh completion for netagent, made by 'netagent completion zsh'.
# Install it:        netagent completion zsh > "${fpath[1]}/_netagent"
#                    (a directory of $fpath; compinit must run after it)
# or in one shell:   autoload -U compinit && compinit; source <(netagent completion zsh)

@CASE_FUNCTIONS@

# _netagent_options KEY: offers KEY's options, each with its description.
_netagent_options() {
    local -a flags descs
    flags=(${=$(_netagent_flags "$1")})
    case $1 in
@OPTION_DESCS@
    esac
    compadd -l -d descs -- $flags
}

# _netagent_words WHAT NAME...: offers the names, described by the array WHAT.
_netagent_words() {
    local -a descs
    descs=("${(@P)1}")
    shift
    compadd -l -d descs -- "$@"
}

_netagent_command_descs=(@COMMAND_DESCS@)
_netagent_fleet_descs=(@FLEET_SUB_DESCS@)

_netagent() {
    local cur=${words[CURRENT]} prev=${words[CURRENT-1]}
    # cmd: the command; key: the command, or fleet-SUB after fleet's
    # subcommand (the first word after fleet that is no option)
    local i w cmd= key= sub= dashdash=
@SCAN_WORDS@

    if [[ -z $dashdash ]]; then
        case $prev in
        --netns)
            compadd -- ${(f)"$(ip netns list 2>/dev/null | cut -d' ' -f1)"}
            return ;;
        --state-dir | --intent-dir)
            _files -/
            return ;;
        --socket | --etcd-ca | --etcd-cert | --etcd-key)
            _files
            return ;;
        --with)
            _files -g '*.json'
            return ;;
        --log-level)
            compadd -- debug info warn error
            return ;;
        --log-format)
            compadd -- text json
            return ;;
        esac
        if [[ $prev == -* && -n $cmd && $(_netagent_valued "$key") == *" $prev "* ]]; then
            _message 'a value'
            return 1 # a value netagent cannot guess: a duration, a number, a link
        fi
    fi

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            compadd -- @GLOBALS@ --help
        else
            _netagent_words _netagent_command_descs @COMMANDS@
        fi
        return
    fi
    if [[ -z $dashdash && $cur == -* ]]; then
        _netagent_options "$key"
        return
    fi
    if [[ $cmd == fleet && -z $sub ]]; then
        _netagent_words _netagent_fleet_descs @FLEET_SUBS@
        return
    fi
    case $key in
    help)
        if [[ -z $dashdash && $prev == fleet ]]; then
            _netagent_words _netagent_fleet_descs @FLEET_SUBS@
        elif [[ -z $dashdash && $prev == help ]]; then
            _netagent_words _netagent_command_descs @COMMANDS@
        fi ;;
    completion) compadd -- @SHELLS@ ;;
    @FILE_COMMANDS@) _files -g '*.json' ;;
    esac
}

if [[ $funcstack[1] == _netagent ]]; then
    _netagent "$@" # autoloaded from $fpath
else
    compdef _netagent netagent
fi
`
