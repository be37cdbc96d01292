package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

func init() {
	register(&command{
		name:    "completion",
		summary: "print a shell completion script (bash, zsh or fish): `source <(netagent completion bash)`",
		usage:   "bash|zsh|fish",
		run:     runCompletion,
	})
}

func runCompletion(g *globals, args []string) int {
	fs := newFlagSet(g, "completion", "bash|zsh|fish")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	write, known := completionWriters[fs.Arg(0)]
	if fs.NArg() != 1 || !known {
		return usageError(g, fs, "want a shell: bash, zsh or fish")
	}
	write(g.stdout, completionSpecs())
	return exitOK
}

// completionShells are the shells completion writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

// completionWriters write each shell's script.
var completionWriters = map[string]func(io.Writer, []completionSpec){
	"bash": writeBashCompletion,
	"zsh":  writeZshCompletion,
	"fish": writeFishCompletion,
}

// completionSpec is what completion knows of a command.
type completionSpec struct {
	name string
	// summary is its one line (a fleet subcommand's own).
	summary string
	// help is each option's usage, its first sentence.
	help map[string]string
	// flags are its options (the global ones included), valued those
	// that take a value.
	flags, valued []string
	// files: its arguments are intent files.
	files bool
}

// completionSpecs reads every command's options out of its flag set: each
// command is run with globals.collect set, which parseFlags hands the flag
// set to before anything is parsed or done. fleet's subcommands are specs
// of their own, named "fleet-SUB".
func completionSpecs() []completionSpec {
	var specs []completionSpec
	for _, name := range commandNames() {
		c := commands[name]
		files := strings.Contains(c.usage, "FILE") && name != "fleet" // fleet's are its subcommands'
		specs = append(specs, collectSpec(name, c.summary, files, c.run))
		if name == "fleet" {
			for _, sub := range fleetSubNames() {
				s := fleetSubs[sub]
				specs = append(specs, collectSpec(name+"-"+sub, s.summary, strings.HasSuffix(s.usage, "FILE"), s.run))
			}
		}
	}
	return specs
}

// collectSpec is the spec of the command run.
func collectSpec(name, summary string, files bool, run func(*globals, []string) int) completionSpec {
	spec := completionSpec{name: name, summary: summary, files: files, help: map[string]string{"--help": "show this command's help"}}
	g := &globals{stdout: io.Discard, stderr: io.Discard, logFormat: "text", logLevel: "info"}
	g.collect = func(fs *flag.FlagSet) {
		fs.VisitAll(func(f *flag.Flag) {
			spec.flags = append(spec.flags, "--"+f.Name)
			spec.help["--"+f.Name] = firstSentence(f.Usage)
			if !isBoolFlag(f) {
				spec.valued = append(spec.valued, "--"+f.Name)
			}
		})
	}
	run(g, nil)
	spec.flags = append(spec.flags, "--help")
	sort.Strings(spec.flags)
	return spec
}

// firstSentence is s up to its first ". " or line end, at most 100
// bytes: an option's or command's description in a completion menu.
func firstSentence(s string) string {
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(strings.TrimSpace(strings.ReplaceAll(s, "`", "")), ".")
	if len(s) > 100 {
		cut := strings.LastIndexByte(s[:100], ' ')
		if cut < 40 {
			cut = 100
		}
		s = s[:cut] + "…"
	}
	return s
}

// fleetSubNames are fleet's subcommands, sorted.
func fleetSubNames() []string {
	names := make([]string, 0, len(fleetSubs))
	for n := range fleetSubs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// writeBashCompletion writes the bash script: the command names after the
// global options; after a command, its options (on "-") and, for those
// that take intent files, *.json files and directories (any file when
// none matches); after --, only files. After fleet, its subcommands, then
// the subcommand's options and (push) its file. Values: namespaces (ip
// netns list) for --netns, directories for --state-dir and --intent-dir,
// files for --socket and the etcd certificates, intent files for fleet
// push's --with, the levels and formats of --log-level and --log-format;
// nothing for the other options that take a value (a duration, a number,
// a link).
func writeBashCompletion(w io.Writer, specs []completionSpec) {
	script := strings.NewReplacer("@SCAN_WORDS@", scanWords("COMP_WORDS", "1", "COMP_CWORD"), "@CASE_FUNCTIONS@", caseFunctions).Replace(bashCompletionScript)
	shellReplacer(specs).WriteString(w, script)
}

// shellReplacer fills in a bash or zsh script's placeholders from specs:
// the command names, the global options (a list and a case pattern),
// each command's options and those that take a value (case arms, the
// valued ones space-delimited), the commands that take intent files (a
// case pattern), fleet's subcommands and the shells.
func shellReplacer(specs []completionSpec) *strings.Replacer {
	var names, flagCases, valuedCases, fileCmds []string
	for _, s := range specs {
		if !strings.Contains(s.name, "-") {
			names = append(names, s.name)
		}
		flagCases = append(flagCases, fmt.Sprintf("    %s) echo %q ;;", s.name, strings.Join(s.flags, " ")))
		if len(s.valued) > 0 {
			valuedCases = append(valuedCases, fmt.Sprintf("    %s) echo %q ;;", s.name, " "+strings.Join(s.valued, " ")+" "))
		}
		if s.files {
			fileCmds = append(fileCmds, s.name)
		}
	}
	globalsFlags := globalFlags()
	return strings.NewReplacer(
		"@COMMANDS@", strings.Join(names, " "),
		"@GLOBALS@", strings.Join(globalsFlags, " "),
		"@GLOBALS_CASE@", strings.Join(globalsFlags, "|"),
		"@FLAG_CASES@", strings.Join(flagCases, "\n"),
		"@VALUED_CASES@", strings.Join(valuedCases, "\n"),
		"@FILE_COMMANDS@", strings.Join(fileCmds, "|"),
		"@FLEET_SUBS@", strings.Join(fleetSubNames(), " "),
		"@SHELLS@", strings.Join(completionShells, " "),
	)
}

// scanWords is the loop of the bash and zsh scripts that reads the words
// before the one being completed into cmd, key (the command, or
// fleet-SUB), sub and dashdash: from index first of the array words, up
// to the index current (bash: COMP_WORDS from 1 to COMP_CWORD; zsh: words
// from 2 to CURRENT).
func scanWords(words, first, current string) string {
	return strings.NewReplacer("@WORDS@", words, "@FIRST@", first, "@CURRENT@", current).Replace(`    for ((i = @FIRST@; i < @CURRENT@; i++)); do
        w=${@WORDS@[i]}
        if [[ -z $cmd ]]; then
            case $w in
            @GLOBALS_CASE@) ((i++)) ;;
            -*) ;;
            *) cmd=$w key=$w ;;
            esac
        elif [[ $w == -- ]]; then
            dashdash=1
        elif [[ -z $dashdash && $w == -* ]]; then
            [[ $w != *=* && $(_netagent_valued "$key") == *" $w "* ]] && ((i++))
        elif [[ $cmd == fleet && -z $sub ]]; then
            sub=$w key=fleet-$w
        fi
    done`)
}

// caseFunctions are the bash and zsh scripts' lookups of a command's
// options (_netagent_flags) and of those that take a value
// (_netagent_valued), filled in by shellReplacer.
const caseFunctions = `# _netagent_flags CMD: the options of CMD.
_netagent_flags() {
    case $1 in
@FLAG_CASES@
    esac
}

# _netagent_valued CMD: the options of CMD that take a value, space-delimited.
_netagent_valued() {
    case $1 in
@VALUED_CASES@
    esac
}`

// globalFlags are the global options, spelled --NAME.
func globalFlags() []string {
	flags := make([]string, 0, len(globalNames))
	for _, n := range globalNames {
		flags = append(flags, "--"+n)
	}
	return flags
}

const bashCompletionScript = `# bash completion for netagent, made by 'netagent completion bash'.
# Load it in a shell:   source <(netagent completion bash)
# or for every shell:   netagent completion bash > /etc/bash_completion.d/netagent

@CASE_FUNCTIONS@

# _netagent_files WORD: intent files (*.json) and directories, or any file
# when none matches.
_netagent_files() {
    local IFS=$'\n'
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -d -- "$1") $(compgen -f -X '!*.json' -- "$1"))
    if ((${#COMPREPLY[@]} == 0)); then
        COMPREPLY=($(compgen -f -- "$1"))
    fi
}

_netagent() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    # cmd: the command; key: the command, or fleet-SUB after fleet's
    # subcommand (the first word after fleet that is no option)
    local i w cmd= key= sub= dashdash=
    COMPREPLY=()
@SCAN_WORDS@

    if [[ -z $dashdash ]]; then
        case $prev in
        --netns)
            COMPREPLY=($(compgen -W "$(ip netns list 2>/dev/null | cut -d' ' -f1)" -- "$cur"))
            return ;;
        --state-dir | --intent-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            return ;;
        --socket | --etcd-ca | --etcd-cert | --etcd-key)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        --with)
            _netagent_files "$cur"
            return ;;
        --log-level)
            COMPREPLY=($(compgen -W "debug info warn error" -- "$cur"))
            return ;;
        --log-format)
            COMPREPLY=($(compgen -W "text json" -- "$cur"))
            return ;;
        esac
        if [[ $prev == -* && -n $cmd && $(_netagent_valued "$key") == *" $prev "* ]]; then
            return # a value netagent cannot guess: a duration, a number, a link
        fi
    fi

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "@GLOBALS@ --help" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "@COMMANDS@" -- "$cur"))
        fi
        return
    fi
    if [[ -z $dashdash && $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_netagent_flags "$key")" -- "$cur"))
        return
    fi
    if [[ $cmd == fleet && -z $sub ]]; then
        COMPREPLY=($(compgen -W "@FLEET_SUBS@" -- "$cur"))
        return
    fi
    case $key in
    help)
        if [[ -z $dashdash && $prev == fleet ]]; then
            COMPREPLY=($(compgen -W "@FLEET_SUBS@" -- "$cur"))
        elif [[ -z $dashdash && $prev == help ]]; then
            COMPREPLY=($(compgen -W "@COMMANDS@" -- "$cur"))
        fi ;;
    completion) COMPREPLY=($(compgen -W "@SHELLS@" -- "$cur")) ;;
    @FILE_COMMANDS@) _netagent_files "$cur" ;;
    esac
}

complete -F _netagent netagent
`
