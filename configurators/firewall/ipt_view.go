package firewall

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/netagent/netagent/items"
)

// OwnerComment is the comment that marks what netagent owns in iptables.
// Every chain netagent creates starts with the rule
//
//	-A <chain> -m comment --comment netagent
//
// (no target: it matches, counts and falls through), and the jump netagent
// puts into a built-in chain is
//
//	-A <builtin> -m comment --comment netagent -j <chain>
//
// The marks live in the kernel, so a restarted agent with no memory knows
// its chains, and a chain of the same name without the mark is someone
// else's.
const OwnerComment = "netagent"

// markerRule is the first rule of every chain netagent owns.
var markerRule = []string{"-m", "comment", "--comment", OwnerComment}

// jumpRule is netagent's jump to chain.
func jumpRule(chain string) []string {
	return []string{"-m", "comment", "--comment", OwnerComment, "-j", chain}
}

// ownedRules reports whether a chain's rules (kernel form) start with the
// marker.
func ownedRules(rules [][]string) bool {
	return len(rules) > 0 && slices.Equal(rules[0], markerRule)
}

// tableView is what is known of one table: chains in the order the kernel
// lists them, each with its rules in kernel form (the arguments after
// "-A <chain>"). A chain not in the view does not exist, or was not loaded.
type tableView struct {
	order  []string
	chains map[string][][]string
	// text holds, for chains read from iptables' output, each rule's
	// arguments as iptables printed them (quoted as for iptables-restore):
	// see ruleText.
	text map[string][]string
}

func newTableView() *tableView { return &tableView{chains: make(map[string][][]string)} }

// addChain records that chain exists (with no rules yet).
func (v *tableView) addChain(chain string) {
	if _, ok := v.chains[chain]; !ok {
		v.order = append(v.order, chain)
		v.chains[chain] = nil
	}
}

// addRule appends a rule to chain, creating the chain's entry.
func (v *tableView) addRule(chain string, args []string) {
	v.addChain(chain)
	v.chains[chain] = append(v.chains[chain], args)
}

// ruleText returns the chain's rules as iptables printed them, nil unless
// every rule of the chain came with its text (addRuleText).
func (v *tableView) ruleText(chain string) []string {
	text := v.text[chain]
	if len(text) != len(v.chains[chain]) {
		return nil
	}
	return text
}

// rules returns the chain's rules and whether it exists.
func (v *tableView) rules(chain string) ([][]string, bool) {
	r, ok := v.chains[chain]
	return r, ok
}

// jumps returns the 1-based positions of netagent's jumps to target in
// chain from.
func (v *tableView) jumps(from, target string) []int {
	var pos []int
	want := jumpRule(target)
	for i, r := range v.chains[from] {
		if slices.Equal(r, want) {
			pos = append(pos, i+1)
		}
	}
	return pos
}

// isJump reports whether a rule is a jump of netagent's, to any chain.
func isJump(r []string) bool {
	return len(r) == len(markerRule)+2 && slices.Equal(r[:len(markerRule)], markerRule) && r[len(markerRule)] == "-j"
}

// foreign counts the rules of chain that are not netagent's jumps.
func (v *tableView) foreign(chain string) int {
	n := 0
	for _, r := range v.chains[chain] {
		if !isJump(r) {
			n++
		}
	}
	return n
}

// jumpAt is where c's jump must be in the view: see
// items.IptablesChain.JumpAt.
func (v *tableView) jumpAt(c *items.IptablesChain) int {
	return c.JumpAt(v.foreign(c.JumpFrom))
}

// parseSave parses iptables-save output into one view per table. The
// rules of a chain, which iptables-save prints together, are parsed from
// one copy of their lines, their arguments substrings of it: one
// allocation a chain for the text instead of one a rule, and what keeps a
// chain's rules (a record, an item) keeps no other chain's text.
func parseSave(out []byte) (map[string]*tableView, error) {
	var p saveParser
	if err := p.write(out); err != nil {
		return nil, err
	}
	return p.finish()
}

// saveParser parses iptables-save output as it comes (write), in pieces
// cut anywhere: while iptables-save prints a large table, netagent parses
// what it has printed.
type saveParser struct {
	views   map[string]*tableView
	cur     *tableView
	pending []byte // an incomplete last line
	// listing: the input is one table as "-S" prints it (see
	// newListingParser), into cur; rules is set once a rule came.
	listing, rules bool
}

// write parses the complete lines of what came so far.
func (p *saveParser) write(chunk []byte) error {
	p.pending = append(p.pending, chunk...)
	end := bytes.LastIndexByte(p.pending, '\n') + 1
	if end == 0 {
		return nil
	}
	err := p.parse(p.pending[:end])
	p.pending = append(p.pending[:0], p.pending[end:]...)
	return err
}

// finish parses the last line, if it has no newline, and returns the
// views.
func (p *saveParser) finish() (map[string]*tableView, error) {
	if err := p.parse(p.pending); err != nil {
		return nil, err
	}
	p.pending = nil
	if p.views == nil {
		p.views = make(map[string]*tableView)
	}
	return p.views, nil
}

// parse parses whole lines.
func (p *saveParser) parse(out []byte) error {
	for len(out) > 0 {
		line, rest := cutLine(out)
		switch {
		case len(line) == 0 || line[0] == '#' || string(line) == "COMMIT":
		case line[0] == '*':
			if p.views == nil {
				p.views = make(map[string]*tableView)
			}
			p.cur = newTableView()
			p.views[string(line[1:])] = p.cur
		case p.cur == nil:
			return fmt.Errorf("iptables-save line %q outside a table", line)
		case line[0] == ':':
			name, _, _ := bytes.Cut(line[1:], []byte(" "))
			p.cur.addChain(string(name))
		case p.listing && (bytes.HasPrefix(line, []byte("-P ")) || bytes.HasPrefix(line, []byte("-N "))):
			if err := p.declare(line); err != nil {
				return err
			}
		default:
			p.rules = true
			n := chainLines(out)
			if err := addRuleLines(p.cur, string(out[:n])); err != nil {
				return err
			}
			rest = out[n:]
		}
		out = rest
	}
	return nil
}

// newListingParser returns a parser of what "-S" printed at the end of a
// restore's transaction (see renderTable), into its cur: one table in
// iptables -S's form, "-P <built-in chain> <policy>" and "-N <chain>" for
// its chains, in iptables-save's order, then its rules as iptables-save
// prints them.
func newListingParser() *saveParser {
	return &saveParser{listing: true, cur: newTableView()}
}

// declare adds the chain of a listing's "-P" or "-N" line. One after a
// rule starts the listing again: should iptables print its listing twice
// (a transaction it retried), the last counts.
func (p *saveParser) declare(line []byte) error {
	f := bytes.Fields(line[3:])
	if len(f) == 0 {
		return fmt.Errorf("iptables listing line %q names no chain", line)
	}
	if p.rules {
		p.cur, p.rules = newTableView(), false
	}
	p.cur.addChain(string(f[0]))
	return nil
}

// cutLine returns the first line of text, without its newline (nor a
// carriage return before it), and the rest.
func cutLine(text []byte) (line, rest []byte) {
	line, rest, _ = bytes.Cut(text, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), rest
}

// chainLines returns the length of the lines at the start of text that
// append to the chain the first one appends to ("-A <chain> ..."), at
// least that first line, with their newlines.
func chainLines(text []byte) int {
	first, _, _ := bytes.Cut(text, []byte("\n"))
	head := first
	if f := bytes.Fields(first); len(f) >= 2 && string(f[0]) == "-A" {
		head = append([]byte("-A "), f[1]...)
		head = append(head, ' ')
	}
	n := 0
	for n < len(text) {
		line, _, found := bytes.Cut(text[n:], []byte("\n"))
		if n > 0 && !bytes.HasPrefix(line, head) {
			break
		}
		n += len(line)
		if found {
			n++
		}
	}
	return n
}

// addRuleLines adds the "-A <chain> <args...>" lines of text to v, each
// rule with its text when its line is spelt plainly ("-A", one blank, the
// chain bare, one blank). The arguments of all the lines share one backing
// array, and each run of lines of one chain goes into v at once.
func addRuleLines(v *tableView, text string) error {
	lines := strings.Count(text, "\n") + 1
	backing := make([]string, 0, strings.Count(text, " ")+lines)
	run := ruleRun{rules: make([][]string, 0, lines), text: make([]string, 0, lines)}
	for text != "" {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if line = strings.TrimSuffix(line, "\r"); line == "" {
			continue
		}
		start := len(backing)
		var err error
		if backing, err = appendArgs(backing, line); err != nil {
			return err
		}
		args := backing[start:len(backing):len(backing)]
		if len(args) < 2 || args[0] != "-A" {
			return fmt.Errorf("unexpected iptables line %q", line)
		}
		if args[1] != run.chain {
			run.flush(v)
			run.chain = args[1]
		}
		run.add(args[2:], line)
	}
	run.flush(v)
	return nil
}

// ruleRun is consecutive rules of one chain, with their text while every
// one has it.
type ruleRun struct {
	chain  string
	rules  [][]string
	text   []string
	noText bool
}

// add appends a rule, its line being "-A <chain> <args...>".
func (r *ruleRun) add(args []string, line string) {
	r.rules = append(r.rules, args)
	rest, ok := strings.CutPrefix(line, "-A "+r.chain)
	switch {
	case !ok || rest != "" && rest[0] != ' ':
		r.noText = true
	case rest == "":
		r.text = append(r.text, "")
	default:
		r.text = append(r.text, rest[1:])
	}
}

// flush adds the run's rules to v and empties the run.
func (r *ruleRun) flush(v *tableView) {
	if r.chain == "" {
		return
	}
	v.addChain(r.chain)
	have := v.chains[r.chain]
	if !r.noText && len(v.text[r.chain]) == len(have) {
		if v.text == nil {
			v.text = make(map[string][]string)
		}
		v.text[r.chain] = appendOwn(v.text[r.chain], r.text)
	}
	v.chains[r.chain] = appendOwn(have, r.rules)
	r.chain, r.rules, r.text, r.noText = "", r.rules[len(r.rules):], r.text[len(r.text):], false
}

// appendOwn appends add to s, or returns add (its capacity cut to its
// length, so that appending to it copies) when s is empty.
func appendOwn[T any](s, add []T) []T {
	if len(s) == 0 {
		return add[:len(add):len(add)]
	}
	return append(s, add...)
}

// appendArgs appends line's arguments, as splitLine returns them, to dst.
func appendArgs(dst []string, line string) ([]string, error) {
	for i := 0; i < len(line); i++ {
		if line[i] == '"' || line[i] >= 0x80 { // quotes, or unicode blanks strings.Fields knows
			args, err := splitLine(line)
			return append(dst, args...), err
		}
	}
	for i := 0; i < len(line); {
		for i < len(line) && asciiBlank[line[i]] {
			i++
		}
		start := i
		for i < len(line) && !asciiBlank[line[i]] {
			i++
		}
		if start < i {
			dst = append(dst, line[start:i])
		}
	}
	return dst, nil
}

// asciiBlank is strings.Fields' blanks in ASCII.
var asciiBlank = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// parseList parses iptables -S output (what go-iptables' List returns) into
// a view.
func parseList(lines []string) (*tableView, error) {
	v := newTableView()
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "-P ") || strings.HasPrefix(line, "-N "):
			name, _, _ := strings.Cut(line[3:], " ")
			v.addChain(name)
		case strings.HasPrefix(line, "-A "):
			if err := addRuleLines(v, line); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}
