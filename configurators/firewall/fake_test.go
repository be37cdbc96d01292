package firewall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// fakeBackend is an in-memory iptables of one family: restore inputs are
// parsed and applied all or nothing, like the kernel's transaction, and
// every call is recorded. normalize, if set, rewrites rules the way
// iptables prints them back.
type fakeBackend struct {
	tables    map[string]*tableView
	restores  []string
	lists     int
	saves     int
	normalize func([]string) []string
	// failOn makes a restore fail when its input contains the string.
	failOn string
}

var _ backend = (*fakeBackend)(nil)

var errFakeRestore = errors.New("fake iptables-restore failed")

func newFakeBackend() *fakeBackend { return &fakeBackend{tables: map[string]*tableView{}} }

func (f *fakeBackend) list(_ context.Context, table string, chains ...string) (*tableView, error) {
	f.lists++
	v := newTableView()
	src := f.tables[table]
	for _, ch := range chains {
		if src == nil {
			continue
		}
		if rules, ok := src.rules(ch); ok {
			v.addChain(ch)
			for _, r := range rules {
				v.addRule(ch, slices.Clone(r))
			}
		}
	}
	return v, nil
}

func (f *fakeBackend) save(context.Context) (map[string]*tableView, error) {
	f.saves++
	return cloneTables(f.tables), nil
}

func (f *fakeBackend) restore(_ context.Context, input []byte) error {
	f.restores = append(f.restores, string(input))
	if f.failOn != "" && strings.Contains(string(input), f.failOn) {
		return errFakeRestore
	}
	next := cloneTables(f.tables)
	var cur *tableView
	for _, line := range strings.Split(strings.TrimSpace(string(input)), "\n") {
		var err error
		switch {
		case line == "COMMIT":
			cur = nil
		case line[0] == '*':
			cur = next[line[1:]]
			if cur == nil {
				cur = newTableView()
				next[line[1:]] = cur
			}
		case line[0] == ':':
			name, _, _ := strings.Cut(line[1:], " ")
			cur.addChain(name)
			cur.chains[name] = nil
		default:
			err = f.command(cur, line)
		}
		if err != nil {
			return fmt.Errorf("%w: %q: %v", errFakeRestore, line, err)
		}
	}
	f.tables = next
	return nil
}

// command applies one -A, -I, -D, -F or -X line.
func (f *fakeBackend) command(v *tableView, line string) error {
	args, err := splitLine(line)
	if err != nil {
		return err
	}
	cmd, chain, rest := args[0], args[1], args[2:]
	_, exists := v.chains[chain]
	if !exists && cmd != "-A" && cmd != "-I" && cmd != "-N" {
		return errors.New("no such chain")
	}
	switch cmd {
	case "-N":
		if exists {
			return errors.New("chain already exists")
		}
		v.addChain(chain)
	case "-A":
		v.addRule(chain, f.norm(rest))
	case "-I":
		pos, _ := strconv.Atoi(rest[0])
		rules := v.chains[chain]
		if pos < 1 || pos > len(rules)+1 {
			return errors.New("index of insertion too big")
		}
		v.addChain(chain)
		v.chains[chain] = slices.Insert(rules, pos-1, f.norm(rest[1:]))
	case "-D":
		i := slices.IndexFunc(v.chains[chain], func(r []string) bool { return slices.Equal(r, f.norm(rest)) })
		if i < 0 {
			return errors.New("bad rule (does a matching rule exist in that chain?)")
		}
		v.chains[chain] = slices.Delete(v.chains[chain], i, i+1)
	case "-F":
		v.chains[chain] = nil
	case "-X":
		delete(v.chains, chain)
		v.order = slices.DeleteFunc(v.order, func(s string) bool { return s == chain })
	}
	return nil
}

func (f *fakeBackend) norm(args []string) []string {
	if f.normalize == nil {
		return slices.Clone(args)
	}
	return f.normalize(slices.Clone(args))
}

func cloneTables(in map[string]*tableView) map[string]*tableView {
	out := make(map[string]*tableView, len(in))
	for name, v := range in {
		c := newTableView()
		for _, ch := range v.order {
			c.addChain(ch)
			for _, r := range v.chains[ch] {
				c.addRule(ch, slices.Clone(r))
			}
		}
		out[name] = c
	}
	return out
}

// normalizeLikeIptables mimics two of iptables' rewrites: a bare IPv4
// source gets /32, and "--ctstate ESTABLISHED,RELATED" is printed in the
// kernel's bit order.
func normalizeLikeIptables(args []string) []string {
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-s":
			if !strings.Contains(args[i+1], "/") {
				args[i+1] += "/32"
			}
		case "--ctstate":
			if args[i+1] == "ESTABLISHED,RELATED" {
				args[i+1] = "RELATED,ESTABLISHED"
			}
		}
	}
	return args
}
