package intent

import (
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
)

// A table names file is untrusted: only "NUMBER NAME" lines count, others
// are skipped; the first of a name wins; a file too large is not read.
func TestParseRTTables(t *testing.T) {
	got := parseRTTables([]byte("#\n# reserved values\n255\tlocal\n254 main\n 100  isp1 # uplink\n0x65 isp2\n" +
		"0 unspec\n7\n8 two words\n9 bad/name\n-1 neg\n4294967296 big\n101 isp1\n12 ok_name.v2\n"))
	want := map[string]uint32{"local": 255, "main": 254, "isp1": 100, "isp2": 101, "ok_name.v2": 12}
	if !maps.Equal(got, want) {
		t.Errorf("parseRTTables: %v, want %v", got, want)
	}
	dir := t.TempDir() + "/rt_tables"
	big := strings.Repeat("100 isp1\n", maxRTTables/9+1)
	if err := os.WriteFile(dir, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if readRTTables(dir) != nil {
		t.Error("a table names file larger than the bound was read")
	}
}

// Routes and rules take a table's name: the kernel's own, resolved to its
// number; an unknown name is refused with its JSON path.
func TestTableNames(t *testing.T) {
	in, err := Parse([]byte(`{"version": 1, "interfaces": [{"name": "eth0", "type": "physical"}],
	  "routes": [{"to": "10.0.0.0/8", "dev": "eth0", "table": "main"}, {"to": "10.1.0.0/16", "dev": "eth0", "table": 100}],
	  "rules": [{"priority": 100, "from": "10.0.0.0/8", "table": "main"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if in.Routes[0].Table != TableMain || in.Routes[1].Table != 100 || in.Rules[0].Table != TableMain {
		t.Errorf("tables: %d %d %d", in.Routes[0].Table, in.Routes[1].Table, in.Rules[0].Table)
	}
	_, err = Parse([]byte(`{"version": 1, "routes": [{"to": "10.0.0.0/8", "table": "nosuch-table"}]}`))
	want := `routes[0].table: unknown table name "nosuch-table": give a number, main, local, default or a name of /etc/iproute2/rt_tables`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("unknown table name: %v, want %q", err, want)
	}
}

// A vrf's table takes a name as a route's does; the kernel's own tables
// stay refused by name as by number.
func TestVRFTableNames(t *testing.T) {
	prev := RTTablesFiles
	t.Cleanup(func() { RTTablesFiles = prev; rtTables.once = sync.Once{} })
	path := t.TempDir() + "/rt_tables"
	if err := os.WriteFile(path, []byte("1001 blue\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	RTTablesFiles, rtTables.once = []string{path}, sync.Once{}
	in, err := Parse([]byte(`{"version": 1, "interfaces": [{"name": "blue", "type": "vrf", "vrf": {"table": "blue"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := in.Interfaces[0].VRF.Table; got != 1001 {
		t.Errorf("vrf table blue: %d, want 1001", got)
	}
	for name, want := range map[string]string{
		`"main"`:   "interfaces[0].vrf.table: 254 is the main table; a vrf needs a table of its own",
		`"local"`:  "interfaces[0].vrf.table: 255 is the local table",
		`"nosuch"`: `interfaces[0].vrf.table: unknown table name "nosuch"`,
	} {
		in, err := Parse([]byte(`{"version": 1, "interfaces": [{"name": "blue", "type": "vrf", "vrf": {"table": ` + name + `}}]}`))
		if err == nil {
			err = in.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("vrf table %s: %v, want %q", name, err, want)
		}
	}
}
