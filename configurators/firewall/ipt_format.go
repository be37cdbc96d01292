package firewall

import (
	"fmt"
	"strings"
)

// The restore format, as iptables' own parser reads it (add_param_to_argv
// in xshared.c): arguments are separated by blanks; a double quote opens a
// quoted argument in which a backslash escapes the next character; outside
// quotes a backslash is an ordinary character. iptables -S and iptables-save
// print arguments the same way (xtables_save_string), so one tokenizer
// reads both.

// bareChars are the characters an argument may hold and still be written
// without quotes.
const bareChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" +
	"_-+./:,=@%!&[]^~"

// bare marks the bytes of bareChars (strings.Trim with a cutset string
// builds such a set at every call: a fifth of an apply of 10k rules).
var bare = func() (set [256]bool) {
	for i := 0; i < len(bareChars); i++ {
		set[bareChars[i]] = true
	}
	return set
}()

// isBare reports whether arg can be written without quotes: not empty,
// only bareChars, not starting a comment.
func isBare(arg string) bool {
	if arg == "" || arg[0] == '#' {
		return false
	}
	for i := 0; i < len(arg); i++ {
		if !bare[arg[i]] {
			return false
		}
	}
	return true
}

// quoteArg returns arg written for iptables-restore: bare when that is
// unambiguous, else in double quotes with '"' and '\' escaped. A newline,
// carriage return or NUL cannot be passed through the line-based format.
func quoteArg(arg string) (string, error) {
	if isBare(arg) {
		return arg, nil
	}
	if strings.ContainsAny(arg, "\n\r\x00") {
		return "", fmt.Errorf("argument %q: %w", arg, ErrBadArgument)
	}
	var b strings.Builder
	b.Grow(len(arg) + 2)
	b.WriteByte('"')
	for i := 0; i < len(arg); i++ {
		if arg[i] == '"' || arg[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(arg[i])
	}
	b.WriteByte('"')
	return b.String(), nil
}

// ruleLine renders "<cmd> <chain> <args...>" with every argument quoted.
func ruleLine(cmd, chain string, args []string) (string, error) {
	var b strings.Builder
	b.WriteString(cmd)
	b.WriteByte(' ')
	b.WriteString(chain)
	for _, a := range args {
		q, err := quoteArg(a)
		if err != nil {
			return "", err
		}
		b.WriteByte(' ')
		b.WriteString(q)
	}
	return b.String(), nil
}

// splitLine splits one line of iptables -S / iptables-save output into
// arguments, undoing the quoting.
func splitLine(line string) ([]string, error) {
	if !strings.Contains(line, `"`) {
		return strings.Fields(line), nil
	}
	var args []string
	var cur strings.Builder
	inArg, quoted, escaped := false, false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case escaped:
			cur.WriteByte(ch)
			escaped = false
		case quoted && ch == '\\':
			escaped = true
		case quoted && ch == '"':
			quoted = false
		case quoted:
			cur.WriteByte(ch)
		case ch == '"':
			quoted, inArg = true, true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(ch)
			inArg = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote in %q", line)
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}
