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

// bare is bareChars as a table: bare[c] is true for a bare character.
var bare = func() (t [256]bool) {
	for i := 0; i < len(bareChars); i++ {
		t[bareChars[i]] = true
	}
	return t
}()

// needsQuotes reports whether arg must be written in quotes. A newline,
// carriage return or NUL cannot be written at all (badArg).
func needsQuotes(arg string) (quote, badArg bool) {
	if arg == "" || arg[0] == '#' {
		quote = true
	}
	for i := 0; i < len(arg); i++ {
		switch c := arg[i]; {
		case bare[c]:
		case c == '\n' || c == '\r' || c == 0:
			return true, true
		default:
			quote = true
		}
	}
	return quote, false
}

// quoteArg returns arg written for iptables-restore: bare when that is
// unambiguous, else in double quotes with '"' and '\' escaped. A newline,
// carriage return or NUL cannot be passed through the line-based format.
func quoteArg(arg string) (string, error) {
	quote, bad := needsQuotes(arg)
	if bad {
		return "", fmt.Errorf("argument %q: %w", arg, ErrBadArgument)
	}
	if !quote {
		return arg, nil
	}
	var b strings.Builder
	b.Grow(len(arg) + 2)
	writeQuoted(&b, arg)
	return b.String(), nil
}

// writeArg writes arg as quoteArg returns it.
func writeArg(b *strings.Builder, arg string) error {
	quote, bad := needsQuotes(arg)
	switch {
	case bad:
		return fmt.Errorf("argument %q: %w", arg, ErrBadArgument)
	case quote:
		writeQuoted(b, arg)
	default:
		b.WriteString(arg)
	}
	return nil
}

// writeQuoted writes arg in double quotes, '"' and '\' escaped.
func writeQuoted(b *strings.Builder, arg string) {
	b.WriteByte('"')
	for i := 0; i < len(arg); i++ {
		if arg[i] == '"' || arg[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(arg[i])
	}
	b.WriteByte('"')
}

// ruleLine renders "<cmd> <chain> <args...>" with every argument quoted.
func ruleLine(cmd, chain string, args []string) (string, error) {
	var b strings.Builder
	if err := writeRuleLine(&b, cmd, chain, args); err != nil {
		return "", err
	}
	return b.String(), nil
}

// writeRuleLine writes ruleLine's line to b.
func writeRuleLine(b *strings.Builder, cmd, chain string, args []string) error {
	b.WriteString(cmd)
	b.WriteByte(' ')
	b.WriteString(chain)
	for _, a := range args {
		b.WriteByte(' ')
		if err := writeArg(b, a); err != nil {
			return err
		}
	}
	return nil
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
