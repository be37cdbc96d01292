package firewall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/coreos/go-iptables/iptables"
	"github.com/netagent/netagent/configurators/netnsx"
	"github.com/netagent/netagent/items"
)

// backend is one family's iptables inside the target namespace: the three
// things the chain configurator asks of the kernel.
type backend interface {
	// list returns a view of the named chains of table that exist.
	list(ctx context.Context, table string, chains ...string) (*tableView, error)
	// save returns every table the kernel has for the family.
	save(ctx context.Context) (map[string]*tableView, error)
	// restore commits input in one iptables-restore --noflush transaction.
	restore(ctx context.Context, input []byte) error
}

// lister is the part of go-iptables the backend calls.
type lister interface {
	List(table, chain string) ([]string, error)
}

var _ lister = (*iptables.IPTables)(nil)

// runner runs a program (an argument vector, never a shell) inside the
// target namespace, with stdin, and returns its standard output.
type runner interface {
	run(ctx context.Context, stdin []byte, argv ...string) ([]byte, error)
}

// execBackend is the real backend: go-iptables for listing a chain, the
// iptables-save and iptables-restore binaries for whole tables.
type execBackend struct {
	do         func(func() error) error // runs f inside the namespace
	ipt        lister
	run        runner
	saveCmd    string
	restoreCmd string
}

var _ backend = (*execBackend)(nil)

// newExecBackend returns the backend of one family in t's namespace, using
// whichever iptables variant (nf_tables or legacy) is on PATH.
func newExecBackend(t *netnsx.Target, fam items.Family) (*execBackend, error) {
	proto, prefix, err := familyCommands(fam)
	if err != nil {
		return nil, err
	}
	ipt, err := iptables.New(iptables.IPFamily(proto))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	b := &execBackend{do: t.Do, ipt: ipt, run: nsRunner{t}}
	if b.saveCmd, err = exec.LookPath(prefix + "-save"); err != nil {
		return nil, err
	}
	if b.restoreCmd, err = exec.LookPath(prefix + "-restore"); err != nil {
		return nil, err
	}
	return b, nil
}

// familyCommands returns go-iptables' protocol and the command prefix of a
// family.
func familyCommands(fam items.Family) (iptables.Protocol, string, error) {
	switch fam {
	case items.FamilyIPv4:
		return iptables.ProtocolIPv4, "iptables", nil
	case items.FamilyIPv6:
		return iptables.ProtocolIPv6, "ip6tables", nil
	}
	return 0, "", fmt.Errorf("family %v: %w", fam, ErrFamily)
}

func (b *execBackend) list(_ context.Context, table string, chains ...string) (*tableView, error) {
	v := newTableView()
	for _, chain := range chains {
		var lines []string
		err := b.do(func() (err error) {
			lines, err = b.ipt.List(table, chain)
			return err
		})
		if isNoChain(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing chain %s in table %s: %w", chain, table, err)
		}
		cv, err := parseList(lines)
		if err != nil {
			return nil, fmt.Errorf("listing chain %s in table %s: %w", chain, table, err)
		}
		v.addChain(chain)
		for _, r := range cv.chains[chain] {
			v.addRule(chain, r)
		}
	}
	return v, nil
}

// isNoChain reports whether err is iptables' exit status 1 for a chain (or
// table) that does not exist, as go-iptables' ChainExists reads it.
func isNoChain(err error) bool {
	var e *iptables.Error
	return errors.As(err, &e) && e.ExitStatus() == 1
}

func (b *execBackend) save(ctx context.Context) (map[string]*tableView, error) {
	out, err := b.run.run(ctx, nil, b.saveCmd)
	if err != nil {
		return nil, err
	}
	return parseSave(out)
}

func (b *execBackend) restore(ctx context.Context, input []byte) error {
	_, err := b.run.run(ctx, input, b.restoreCmd, "--noflush", "--wait")
	return err
}

// nsRunner runs programs inside a Target's namespace: the child inherits the
// namespace of the locked thread that starts it.
type nsRunner struct{ t *netnsx.Target }

func (r nsRunner) run(ctx context.Context, stdin []byte, argv ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	err := r.t.Do(func() error {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdin = bytes.NewReader(stdin)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		return cmd.Run()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", argv[0], err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
