package intent

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// SplitRule splits a firewall rule into its arguments, the way a POSIX shell
// splits a simple command but with no expansion of any kind, and without
// ever running a shell:
//
//   - spaces and tabs separate arguments;
//   - 'single quotes' keep everything up to the next single quote as is;
//   - "double quotes" keep everything up to the next unescaped double quote,
//     where a backslash escapes only ", \, $ and ` (and is kept otherwise);
//   - outside quotes, a backslash keeps the next character as is;
//   - quoted and unquoted parts next to each other form one argument, and
//     a pair of quotes with nothing inside is an empty argument.
//
// It rejects unbalanced quotes, a trailing backslash, invalid UTF-8 and
// control characters (a rule is one line of iptables-restore input).
func SplitRule(rule string) ([]string, error) {
	if args, ok, err := splitPlain(rule); ok {
		return args, err
	}
	return splitGeneral(rule)
}

// splitGeneral is SplitRule without its fast path (splitPlain).
func splitGeneral(rule string) ([]string, error) {
	if !utf8.ValidString(rule) {
		return nil, fmt.Errorf("rule is not valid UTF-8")
	}
	if i := strings.IndexFunc(rule, isControl); i >= 0 {
		return nil, fmt.Errorf("control character %q at column %d", rule[i], i+1)
	}
	sp := splitter{rule: rule}
	return sp.split()
}

// splitPlain is SplitRule of a rule in ASCII without quotes or
// backslashes, the usual rule (10k of them took a tenth of netagent's own
// work in an apply through the general splitter): its arguments are the
// runs between spaces and tabs, substrings of rule. ok is false for any
// other rule, which the general splitter takes.
func splitPlain(rule string) (args []string, ok bool, err error) {
	n, control := 0, -1 // arguments; the first control character
	for i := 0; i < len(rule); i++ {
		switch c := rule[i]; {
		case c >= 0x80 || c == '\'' || c == '"' || c == '\\':
			return nil, false, nil
		case c == ' ' || c == '\t':
		case isControl(rune(c)):
			if control < 0 {
				control = i
			}
		case i == 0 || rule[i-1] == ' ' || rule[i-1] == '\t':
			n++
		}
	}
	switch {
	case control >= 0:
		return nil, true, fmt.Errorf("control character %q at column %d", rule[control], control+1)
	case n == 0:
		return nil, true, nil
	}
	args = make([]string, 0, n)
	for i := 0; i < len(rule); {
		for i < len(rule) && (rule[i] == ' ' || rule[i] == '\t') {
			i++
		}
		start := i
		for i < len(rule) && rule[i] != ' ' && rule[i] != '\t' {
			i++
		}
		if start < i {
			args = append(args, rule[start:i])
		}
	}
	return args, true, nil
}

// splitter is the state of one SplitRule.
type splitter struct {
	rule  string
	i     int // next byte to read
	args  []string
	cur   strings.Builder
	inArg bool // cur holds an argument, perhaps empty ("")
}

// split runs the splitter over the whole rule.
func (sp *splitter) split() ([]string, error) {
	for sp.i < len(sp.rule) {
		if err := sp.step(); err != nil {
			return nil, err
		}
	}
	sp.endArg()
	return sp.args, nil
}

// step consumes one separator, quoted part, escape or plain character.
func (sp *splitter) step() error {
	switch c := sp.rule[sp.i]; c {
	case ' ', '\t':
		sp.endArg()
		sp.i++
	case '\'':
		return sp.single()
	case '"':
		return sp.double()
	case '\\':
		return sp.escape()
	default:
		sp.add(c)
		sp.i++
	}
	return nil
}

// add appends c to the current argument.
func (sp *splitter) add(c byte) {
	sp.cur.WriteByte(c)
	sp.inArg = true
}

// endArg finishes the current argument, if any.
func (sp *splitter) endArg() {
	if sp.inArg {
		sp.args = append(sp.args, sp.cur.String())
		sp.cur.Reset()
		sp.inArg = false
	}
}

// single consumes a single-quoted part.
func (sp *splitter) single() error {
	end := strings.IndexByte(sp.rule[sp.i+1:], '\'')
	if end < 0 {
		return fmt.Errorf("unbalanced single quote at column %d", sp.i+1)
	}
	sp.cur.WriteString(sp.rule[sp.i+1 : sp.i+1+end])
	sp.inArg = true
	sp.i += end + 2
	return nil
}

// double consumes a double-quoted part.
func (sp *splitter) double() error {
	open := sp.i
	sp.inArg = true
	for sp.i++; sp.i < len(sp.rule); sp.i++ {
		switch c := sp.rule[sp.i]; {
		case c == '"':
			sp.i++
			return nil
		case c == '\\' && sp.i+1 < len(sp.rule) && strings.IndexByte(`"\$`+"`", sp.rule[sp.i+1]) >= 0:
			sp.i++
			sp.cur.WriteByte(sp.rule[sp.i])
		default:
			sp.cur.WriteByte(c)
		}
	}
	return fmt.Errorf("unbalanced double quote at column %d", open+1)
}

// escape consumes a backslash and the character it escapes.
func (sp *splitter) escape() error {
	if sp.i+1 == len(sp.rule) {
		return fmt.Errorf("trailing backslash at column %d", sp.i+1)
	}
	sp.add(sp.rule[sp.i+1])
	sp.i += 2
	return nil
}

// isControl reports whether r is an ASCII control character other than tab.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || r == 0x7f
}
