package firewall

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// FakeIPTables is an in-memory iptables of one family: restore inputs are
// parsed and applied all or nothing, like the kernel's transaction, and
// every call is recorded. normalize, if set, rewrites rules the way
// iptables prints them back.
type FakeIPTables struct {
	tables    map[string]*tableView
	restores  []string
	lists     int
	saves     int
	normalize func([]string) []string
	// failOn makes a restore fail when its input contains the string.
	failOn string
}

var _ backend = (*FakeIPTables)(nil)

var errFakeRestore = errors.New("fake iptables-restore failed")

func NewFakeIPTables() *FakeIPTables { return &FakeIPTables{tables: map[string]*tableView{}} }

func (f *FakeIPTables) list(_ context.Context, table string, chains ...string) (*tableView, error) {
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

func (f *FakeIPTables) save(context.Context) (map[string]*tableView, error) {
	f.saves++
	return cloneTables(f.tables), nil
}

func (f *FakeIPTables) restore(ctx context.Context, input []byte) error {
	_, err := f.restoreOutput(ctx, input)
	return err
}

// restoreOutput is restore, returning what it printed: for a "-S" line,
// the table as the transaction has it so far, as iptables-nft lists it
// (its chains declared with -N, then their rules).
func (f *FakeIPTables) restoreOutput(_ context.Context, input []byte) ([]byte, error) {
	f.restores = append(f.restores, string(input))
	if f.failOn != "" && strings.Contains(string(input), f.failOn) {
		return nil, errFakeRestore
	}
	next := cloneTables(f.tables)
	var cur *tableView
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(input)), "\n") {
		var err error
		switch {
		case line == "COMMIT":
			cur = nil
		case line == "-S":
			writeListing(&out, cur)
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
			return nil, fmt.Errorf("%w: %q: %v", errFakeRestore, line, err)
		}
	}
	f.tables = next
	return []byte(out.String()), nil
}

// writeListing writes v as iptables -S lists a table.
func writeListing(b *strings.Builder, v *tableView) {
	for _, ch := range v.order {
		fmt.Fprintf(b, "-N %s\n", ch)
	}
	for _, ch := range v.order {
		for _, rule := range v.chains[ch] {
			fmt.Fprintf(b, "-A %s %s\n", ch, strings.Join(rule, " "))
		}
	}
}

// command applies one -A, -I, -D, -F or -X line.
func (f *FakeIPTables) command(v *tableView, line string) error {
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

func (f *FakeIPTables) norm(args []string) []string {
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

// fakeRunner plays iptables-save and iptables-restore over a FakeIPTables,
// for an execBackend.
type fakeRunner struct{ fb *FakeIPTables }

func (r fakeRunner) run(ctx context.Context, stdin []byte, argv ...string) ([]byte, error) {
	switch argv[0] {
	case "iptables-save":
		r.fb.saves++
		var b strings.Builder
		for _, name := range sortedKeys(r.fb.tables) {
			v := r.fb.tables[name]
			fmt.Fprintf(&b, "*%s\n", name)
			for _, ch := range v.order {
				fmt.Fprintf(&b, ":%s - [0:0]\n", ch)
			}
			for _, ch := range v.order {
				for _, rule := range v.chains[ch] {
					fmt.Fprintf(&b, "-A %s %s\n", ch, strings.Join(rule, " "))
				}
			}
			b.WriteString("COMMIT\n")
		}
		return []byte(b.String()), nil
	case "iptables-restore":
		return r.fb.restoreOutput(ctx, stdin)
	}
	return nil, fmt.Errorf("unexpected %v", argv)
}

// fakeLister plays iptables -S over a FakeIPTables, for an execBackend.
type fakeLister struct{ fb *FakeIPTables }

func (l fakeLister) List(table, chain string) ([]string, error) {
	v := l.fb.tables[table]
	rules, ok := v.rules(chain)
	if v == nil || !ok {
		return nil, errors.New("fakeLister: no such chain") // not iptables' "no chain" status: the test lists none
	}
	out := []string{"-N " + chain}
	for _, r := range rules {
		out = append(out, "-A "+chain+" "+strings.Join(r, " "))
	}
	return out, nil
}

// FakeProcSys is an in-memory /proc/sys that counts writes.
type FakeProcSys struct {
	files  map[string]string
	writes int
}

func (f *FakeProcSys) read(path string) (string, error) {
	v, ok := f.files[path]
	if !ok {
		return "", fs.ErrNotExist
	}
	return v, nil
}

func (f *FakeProcSys) write(path, value string) error {
	if _, ok := f.files[path]; !ok {
		return fs.ErrNotExist
	}
	f.files[path] = value
	f.writes++
	return nil
}

// Fake is a namespace's netfilter and /proc/sys/net in memory, for other
// packages' tests: an iptables of each family (FakeIPTables, its tables
// empty until a restore writes them; iptables' own rewrites of a rule
// are mimicked in part, normalizeLikeIptables) and a /proc/sys/net that
// holds only the files it is given (FakeProcSys; a write of another is
// ENOENT, as for an interface that is not there). Register and ReadBack
// run the real configurators over it, their state in a state directory
// as over a namespace.
type Fake struct {
	IPTables map[items.Family]*FakeIPTables
	ProcSys  *FakeProcSys
	// Identity, if set, is the namespace's identity in the state files
	// (a snapshot's namespace); else a fixed fake one.
	Identity *statefile.NsIdentity
}

// fakeNsIdentity is the fake namespace's identity in the state files.
var fakeNsIdentity = statefile.NsIdentity{BootID: "fake-boot", Netns: "fake", NsID: "NS(0:1)"}

// NewFake returns a Fake whose /proc/sys/net holds files (path → value,
// "/proc/sys/net/ipv4/ip_forward": "0"); files may be nil.
func NewFake(files map[string]string) *Fake {
	f := &Fake{IPTables: map[items.Family]*FakeIPTables{}, ProcSys: NewFakeProcSys(files)}
	for _, fam := range families {
		ipt := NewFakeIPTables()
		ipt.normalize = normalizeLikeIptables
		f.IPTables[fam] = ipt
	}
	return f
}

// NewFakeProcSys returns a /proc/sys/net holding files (path → value).
func NewFakeProcSys(files map[string]string) *FakeProcSys {
	if files == nil {
		files = map[string]string{}
	}
	return &FakeProcSys{files: files}
}

// Files returns a copy of what the /proc/sys/net holds (path → value).
func (f *FakeProcSys) Files() map[string]string { return maps.Clone(f.files) }

// Writes counts the values written so far.
func (f *FakeProcSys) Writes() int { return f.writes }

// configurators are the chain and sysctl configurators over f, their
// state in stateDir, as newChainConfigurator and newSysctlConfigurator
// make them over a namespace.
func (f *Fake) configurators(stateDir string) (*chainConfigurator, *sysctlConfigurator, error) {
	id := fakeNsIdentity
	if f.Identity != nil {
		id = *f.Identity
	}
	dir := chainRecordDir(stateDir, id.Netns)
	recs, err := sharedRecords(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("iptables-chain configurator: loading records: %w", err)
	}
	c := &chainConfigurator{backends: map[items.Family]backend{}, records: recs, made: loadMade(dir, id)}
	for fam, ipt := range f.IPTables {
		c.backends[fam] = ipt
	}
	return c, &sysctlConfigurator{fs: f.ProcSys, store: newSysctlStore(stateDir, id)}, nil
}

// Register registers the iptables-chain and sysctl configurators over
// the fake, as Register does over a namespace.
func (f *Fake) Register(reg *reconciler.TypeRegistry, stateDir string) error {
	chains, sysctls, err := f.configurators(stateDir)
	if err != nil {
		return err
	}
	if err := reg.Register(items.TypeIptablesChain, chains); err != nil {
		return err
	}
	return reg.Register(items.TypeSysctl, sysctls)
}

// ReadBack returns the chains and sysctls netagent owns in the fake, as
// ReadBack does a namespace's.
func (f *Fake) ReadBack(stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	chains, sysctls, err := f.configurators(stateDir)
	if err != nil {
		return nil, err
	}
	return readBackBoth(chains.backends, chains, sysctls, hint)
}

// Clashes finds, as Clashes does in a namespace, the intended chains
// whose place someone else's chain holds in the fake.
func (f *Fake) Clashes(stateDir string, hint *dg.Graph) (map[dg.ItemRef]error, error) {
	if hint == nil {
		return nil, nil
	}
	chains, _, err := f.configurators(stateDir)
	if err != nil {
		return nil, err
	}
	return chainClashes(context.Background(), chains, hint)
}
