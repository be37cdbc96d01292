package firewall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coreos/go-iptables/iptables"
	"github.com/netagent/netagent/internal/netnsx"
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
	do func(func() error) error // runs f inside the namespace
	// newLister makes the go-iptables lister, at the first list: making
	// one runs `iptables --version`, a program start that most backends
	// (a batch, a read-back: iptables-save and -restore only) never need.
	newLister  func() (lister, error)
	once       sync.Once
	ipt        lister
	iptErr     error
	run        runner
	saveCmd    string
	restoreCmd string
	// key names the namespace and family for the tables saved after a
	// write (ipt_afterwrite.go).
	key afterWriteKey
	// noTables, when set, tells that the family has no table, so that
	// save need not run the program (ipt_empty.go).
	noTables tablesProbe
	// listing: the restore program lists a table at the end of its
	// transaction ("-S" before COMMIT) as the transaction leaves it, in
	// iptables-save's spelling, so that a batch learns what it wrote
	// without an iptables-save after it (ApplyBatch). iptables-nft does:
	// it prints its cache of the table, which holds the transaction's
	// changes, as iptables-save prints what the kernel holds, rule for
	// rule. iptables-legacy does not (it cannot print a jump to a chain
	// the same transaction made), nor, as far as is known, may every
	// other version: a batch whose transaction fails with the listing
	// tries once more without it, and lists no more if that works.
	listing atomic.Bool
}

// lister returns the go-iptables lister, made at the first call.
func (b *execBackend) lister() (lister, error) {
	b.once.Do(func() { b.ipt, b.iptErr = b.newLister() })
	return b.ipt, b.iptErr
}

var _ backend = (*execBackend)(nil)

// newExecBackend returns the backend of one family in t's namespace, using
// the first iptables variant whose three programs (iptables, -save,
// -restore) are all on PATH: the plain names (whichever variant the system
// chose), then the nf_tables ones, then the legacy ones. When none is
// complete it returns a backend whose every call fails with ErrNoTools, so
// that a chain of the family fails as its own item and the rest of the
// intent still works.
func newExecBackend(t *netnsx.Target, fam items.Family) (backend, error) {
	proto, prefix, err := familyCommands(fam)
	if err != nil {
		return nil, err
	}
	cmds, err := findCommands(prefix)
	if err != nil {
		return missingBackend{err: err}, nil
	}
	newLister := func() (lister, error) {
		ipt, err := iptables.New(iptables.IPFamily(proto), iptables.Path(cmds.list))
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %w", cmds.list, ErrNoTools, err)
		}
		return ipt, nil
	}
	b := &execBackend{do: t.Do, newLister: newLister, run: nsRunner{t}, saveCmd: cmds.save, restoreCmd: cmds.restore,
		key: afterWriteKey{netns: t.Name, fam: fam}, noTables: newTablesProbe(t, fam, cmds.save)}
	b.listing.Store(variantOf(cmds.restore) == "nft")
	return b, nil
}

// iptVariants are the spellings of an iptables variant's program names,
// tried in order: "iptables", "iptables-nft", "iptables-legacy".
var iptVariants = []string{"", "-nft", "-legacy"}

// commands are the paths of one variant's programs.
type commands struct{ list, save, restore string }

// findCommands finds the first variant of prefix ("iptables" or
// "ip6tables") with all three programs on PATH.
func findCommands(prefix string) (commands, error) {
	for _, v := range iptVariants {
		var c commands
		var err error
		for _, p := range []struct {
			dst  *string
			name string
		}{{&c.list, prefix + v}, {&c.save, prefix + v + "-save"}, {&c.restore, prefix + v + "-restore"}} {
			if *p.dst, err = exec.LookPath(p.name); err != nil {
				break
			}
		}
		if err == nil {
			return c, nil
		}
	}
	return commands{}, fmt.Errorf("%s-restore not found (no %s, %s-nft or %s-legacy with its -save and -restore on PATH): %w",
		prefix, prefix, prefix, prefix, ErrNoTools)
}

// missingBackend stands for a family whose iptables programs are missing:
// every call fails with err.
type missingBackend struct{ err error }

var _ backend = missingBackend{}

func (m missingBackend) list(context.Context, string, ...string) (*tableView, error) {
	return nil, m.err
}
func (m missingBackend) save(context.Context) (map[string]*tableView, error) { return nil, m.err }
func (m missingBackend) restore(context.Context, []byte) error               { return m.err }

// MissingTools reports, joined, the address families whose iptables
// programs are not on PATH (nil when both are there): their chains cannot
// be applied, and read-back skips them.
func MissingTools() error {
	var errs []error
	for _, fam := range families {
		_, prefix, _ := familyCommands(fam)
		if _, err := findCommands(prefix); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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
	ipt, err := b.lister()
	if err != nil {
		return nil, err
	}
	for _, chain := range chains {
		var lines []string
		err := b.do(func() (err error) {
			lines, err = ipt.List(table, chain)
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
	if b.noTables != nil {
		if none, err := b.noTables(); err == nil && none {
			return parseSave(nil) // what the program prints: nothing
		}
	}
	if s, ok := b.run.(streamer); ok {
		var p saveParser
		if err := s.stream(ctx, nil, p.write, b.saveCmd); err != nil {
			return nil, err
		}
		return p.finish()
	}
	out, err := b.run.run(ctx, nil, b.saveCmd)
	if err != nil {
		return nil, err
	}
	return parseSave(out)
}

func (b *execBackend) restore(ctx context.Context, input []byte) error {
	return b.restoreTo(ctx, input, func([]byte) error { return nil })
}

// restoreListed is restore of a transaction that ends in a listing of its
// table (see listing): it returns the table as listed, nil when the
// listing did not parse. The listing is parsed as the program prints it,
// while the kernel commits.
func (b *execBackend) restoreListed(ctx context.Context, input []byte) (*tableView, error) {
	p := newListingParser()
	var perr error
	consume := func(chunk []byte) error {
		if perr == nil {
			perr = p.write(chunk)
		}
		return nil
	}
	if err := b.restoreTo(ctx, input, consume); err != nil {
		return nil, err
	}
	if perr == nil {
		_, perr = p.finish()
	}
	if perr != nil {
		return nil, nil // the write worked: the caller saves to see what it left
	}
	return p.cur, nil
}

// restoreTo commits input in one iptables-restore --noflush transaction,
// passing what the program prints to consume.
func (b *execBackend) restoreTo(ctx context.Context, input []byte, consume func([]byte) error) error {
	b.key.wrote()
	argv := []string{b.restoreCmd, "--noflush", "--wait"}
	if s, ok := b.run.(streamer); ok {
		return s.stream(ctx, input, consume, argv...)
	}
	out, err := b.run.run(ctx, input, argv...)
	if err != nil {
		return err
	}
	return consume(out)
}

// streamer is a runner that hands a program's standard output to consume
// as it comes, so that the caller works while the program does.
type streamer interface {
	stream(ctx context.Context, stdin []byte, consume func([]byte) error, argv ...string) error
}

// nsRunner runs programs inside a Target's namespace: the child inherits the
// namespace of the locked thread that starts it.
type nsRunner struct{ t *netnsx.Target }

var _ streamer = nsRunner{}

// stream runs argv with stdin (none when nil) and passes its output to
// consume piece by piece, each valid only during the call. After consume
// fails, the rest of the output is read and dropped, and the program
// waited for; its error comes first.
func (r nsRunner) stream(ctx context.Context, stdin []byte, consume func([]byte) error, argv ...string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	if err := r.t.Do(cmd.Start); err != nil {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	var cerr, rerr error
	buf := make([]byte, 64*1024)
	for rerr == nil {
		var n int
		n, rerr = out.Read(buf)
		if n > 0 && cerr == nil {
			cerr = consume(buf[:n])
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w: %s", argv[0], err, strings.TrimSpace(stderr.String()))
	}
	if !errors.Is(rerr, io.EOF) {
		return fmt.Errorf("%s: reading its output: %w", argv[0], rerr)
	}
	return cerr
}

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
