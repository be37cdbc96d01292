//go:build !vmtest

package netns_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/netplan"
	"github.com/netagent/netagent/agent/intent"
)

// oracleCase is a configuration file of another tool (netplan,
// ifupdown2) that both that tool and netagent can apply in a namespace of
// this host: the oracle tests compare the two kernels, the adoption tests
// let the old tool configure a namespace and netagent take it over.
type oracleCase struct {
	name   string         // as the outcome tables name it
	source string         // import's source: "netplan" or "eni"
	file   string         // the file the old tool reads
	in     *intent.Intent // the importer's reading of file
	// old has the old tool configure e from file (the stand-ins made).
	old func(t *testing.T, e *cliEnv)
}

// netplanCase is the oracle case of a netplan example: networkd on what
// `netplan generate` renders of it.
func netplanCase(file string, in *intent.Intent) oracleCase {
	return oracleCase{name: filepath.Base(file), source: "netplan", file: file, in: in,
		old: func(t *testing.T, e *cliEnv) { runNetworkd(t, e, netplanGenerate(t, file)) }}
}

// eniCaseOf is the oracle case of an ENI file: ifupdown2's ifup -a on it.
func eniCaseOf(name, file string, in *intent.Intent) oracleCase {
	return oracleCase{name: name, source: "eni", file: file, in: in,
		old: func(t *testing.T, e *cliEnv) { eniIfup(t, e, file) }}
}

// oracleCases are the cases the oracle tests compare: the netplan
// examples that import and that this host's kernel can hold, and the ENI
// examples and own cases that import.
func oracleCases(t *testing.T) []oracleCase {
	var cases []oracleCase
	for _, f := range netplanFiles(t) {
		res, err := netplan.Import([]string{f}, importer.Options{})
		if err == nil && netplanNotOnHost(res.Intent) == "" && !netplanDHCP(res.Intent) {
			cases = append(cases, netplanCase(f, res.Intent))
		}
	}
	for _, c := range eniFiles(t) {
		if c[0] == "own:source-relative" {
			// Its source is relative to the working directory, which the
			// CLI runs of the switch-over do not move to (TestENIOracle
			// runs it where ifupdown2 does).
			continue
		}
		if res, err := eniImport(t, c[1]); err == nil && !eniVLANFiltering(res.Intent) {
			cases = append(cases, eniCaseOf(c[0], c[1], res.Intent))
		}
	}
	return cases
}

// netplanFiles are netplan.io's examples.
func netplanFiles(t *testing.T) []string {
	files, err := filepath.Glob(netplanExamples)
	if err != nil || len(files) == 0 {
		t.Fatalf("no netplan examples (scripts/setup.sh installs netplan.io): %v", err)
	}
	return files
}

// eniFiles are ifupdown2's examples and the own cases (written into a
// temporary directory), as {name, path} pairs.
func eniFiles(t *testing.T) [][2]string {
	files, err := filepath.Glob(filepath.Join(eniCache, "usr/share/doc/ifupdown2/examples/*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no ifupdown2 examples in %s (run scripts/setup.sh): %v", eniCache, err)
	}
	sub, _ := filepath.Glob(filepath.Join(eniCache, "usr/share/doc/ifupdown2/examples/*/*"))
	var out [][2]string
	for _, f := range append(files, sub...) {
		if st, err := os.Stat(f); err != nil || st.IsDir() || strings.HasSuffix(f, ".py") || strings.HasSuffix(f, ".sh") {
			continue
		}
		out = append(out, [2]string{strings.TrimPrefix(f, eniCache+"/usr/share/doc/ifupdown2/examples/"), f})
	}
	for _, name := range slices.Sorted(maps.Keys(eniOwnCases)) {
		out = append(out, [2]string{name, eniWriteCase(t, eniOwnCases[name])})
	}
	return out
}

// oracleCompare applies c by the old tool in one namespace and its
// import by netagent in another, and returns how the two kernels differ
// (lineDiff of oracleView: "-" the old tool only, "+" netagent only; ""
// when they agree).
func oracleCompare(t *testing.T, c oracleCase) string {
	old, ours := cliNewEnv(t), cliNewEnv(t)
	for _, e := range []*cliEnv{old, ours} {
		oracleStandIns(e, c.in)
	}
	c.old(t, old)
	data, err := importer.Encode(c.in)
	if err != nil {
		t.Fatal(err)
	}
	ours.mustRun(0, "apply", ours.writeFile("intent.json", string(data)))
	auto := autoPriorities(c.in)
	return lineDiff(oracleView(old, auto), oracleView(ours, auto))
}

// oracleStandIns makes a veth for each physical NIC in names (not lo),
// its peer standinN up, so that the NIC gets a carrier once it is up.
func oracleStandIns(e *cliEnv, in *intent.Intent) {
	for i, ifc := range in.Interfaces {
		if ifc.Type == intent.LinkPhysical && ifc.Name != "lo" {
			peer := fmt.Sprintf("standin%d", i)
			e.ip("link", "add", ifc.Name, "type", "veth", "peer", "name", peer)
			e.ip("link", "set", peer, "up")
		}
	}
}

// tb makes cliEnv an oracleNS.
func (e *cliEnv) tb() testing.TB { return e.t }
