package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// writeFishCompletion writes the fish script: what the bash script
// completes (writeBashCompletion), each command, subcommand and option
// with its description. Fish reads the command line itself
// (__netagent_key: the command, or fleet-SUB) and asks for options only
// on "-".
func writeFishCompletion(w io.Writer, specs []completionSpec) {
	var valuedCases, lines []string
	add := func(cond, rest string) {
		lines = append(lines, fmt.Sprintf("complete -c netagent -n %s %s", fishQuote(cond), rest))
	}
	for _, s := range specs {
		if len(s.valued) > 0 {
			valuedCases = append(valuedCases, fmt.Sprintf("        case %s\n            printf '%%s\\n' %s", s.name, strings.Join(s.valued, " ")))
		}
		if sub, ok := strings.CutPrefix(s.name, "fleet-"); ok {
			add("__netagent_is fleet", fmt.Sprintf("-a %s -d %s", sub, fishQuote(firstSentence(s.summary))))
		} else {
			add(`__netagent_is ""`, fmt.Sprintf("-a %s -d %s", s.name, fishQuote(firstSentence(s.summary))))
			add("__netagent_after help help", fmt.Sprintf("-a %s -d %s", s.name, fishQuote(firstSentence(s.summary))))
		}
		if s.files {
			add("__netagent_is "+s.name, "-a '(__netagent_files)'")
		}
		for _, f := range s.flags {
			add("__netagent_is "+s.name, fishOption(f, slices.Contains(s.valued, f), s.help[f]))
		}
	}
	for _, f := range globalFlags() {
		add(`__netagent_is ""`, fishOption(f, true, ""))
	}
	for _, sub := range fleetSubNames() {
		add("__netagent_after help fleet", fmt.Sprintf("-a %s -d %s", sub, fishQuote(firstSentence(fleetSubs[sub].summary))))
	}
	add("__netagent_is completion", "-a "+fishQuote(strings.Join(completionShells, " ")))
	r := strings.NewReplacer(
		"@GLOBALS@", strings.Join(globalFlags(), " "),
		"@VALUED_CASES@", strings.Join(valuedCases, "\n"),
		"@COMPLETES@", strings.Join(lines, "\n"),
	)
	r.WriteString(w, fishCompletionScript)
}

// fishOption is the complete arguments of option f: -l NAME, whether and
// what value it takes (namespaces, directories, files, intent files,
// levels and formats, or nothing to guess: -x), and its description.
func fishOption(f string, valued bool, help string) string {
	arg := "-l " + strings.TrimPrefix(f, "--")
	if valued {
		switch f {
		case "--netns":
			arg += ` -x -a '(ip netns list 2>/dev/null | string replace -r " .*" "")'`
		case "--state-dir", "--intent-dir":
			arg += " -x -a '(__fish_complete_directories)'"
		case "--socket", "--etcd-ca", "--etcd-cert", "--etcd-key":
			arg += " -r -F"
		case "--with":
			arg += " -x -a '(__netagent_files)'"
		case "--log-level":
			arg += " -x -a 'debug info warn error'"
		case "--log-format":
			arg += " -x -a 'text json'"
		default:
			arg += " -x" // a value netagent cannot guess: a duration, a number, a link
		}
	}
	if help != "" {
		arg += " -d " + fishQuote(help)
	}
	return arg
}

// fishQuote quotes s for fish: in single quotes, \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

const fishCompletionScript = `# fish completion for netagent, made by 'netagent completion fish'.
# Install it:        netagent completion fish > ~/.config/fish/completions/netagent.fish
# or in one shell:   netagent completion fish | source

# __netagent_valued KEY: the options of KEY that take a value, one a line.
function __netagent_valued --argument-names key
    switch $key
@VALUED_CASES@
    end
end

# __netagent_key: the command, or fleet-SUB after fleet's subcommand (the
# first word after fleet that is no option); nothing before the command.
function __netagent_key
    set -l words (commandline -opc)
    set -e words[1]
    set -l cmd
    set -l key
    set -l skip 0
    set -l dashdash 0
    for w in $words
        if test $skip = 1
            set skip 0
        else if test -z "$cmd"
            switch $w
                case @GLOBALS@
                    set skip 1
                case '-*'
                case '*'
                    set cmd $w
                    set key $w
            end
        else if test "$w" = --
            set dashdash 1
        else if test $dashdash = 0; and string match -q -- '-*' $w
            if not string match -q -- '*=*' $w; and contains -- $w (__netagent_valued $key)
                set skip 1
            end
        else if test "$cmd" = fleet; and test "$key" = fleet
            set key fleet-$w
        end
    end
    printf '%s\n' $key
end

# __netagent_is KEY: the command line is at KEY ("" before the command).
function __netagent_is --argument-names want
    set -l key (__netagent_key)
    test "$key" = "$want"
end

# __netagent_after KEY WORD: at KEY, right after WORD.
function __netagent_after --argument-names want prev
    set -l words (commandline -opc)
    __netagent_is $want; and test "$words[-1]" = "$prev"
end

# __netagent_files: intent files (*.json) and directories, or any file
# when none matches.
function __netagent_files
    set -l all (complete -C "__fish_command_without_completions "(string escape -- (commandline -ct)))
    set -l json (string match -r -- '.*\.json$' $all) (string match -r -- '.*/$' $all)
    if set -q json[1]
        printf '%s\n' $json
    else
        printf '%s\n' $all
    end
end

complete -c netagent -f
@COMPLETES@
`
