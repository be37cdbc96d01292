//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/status"
)

// daemonWANFile is an uplink netagent creates (wan0, a veth) with an
// address and the default route through it; protected is its
// "protected" value.
func daemonWANFile(protected bool) string {
	p := "false"
	if protected {
		p = "true"
	}
	return `{"version": 1,
	  "interfaces": [{"name": "wan0", "type": "veth", "veth": {"peer": "wan0-peer"}, "addresses": ["192.0.2.10/24"], "protected": ` + p + `}],
	  "routes": [{"to": "default", "via": "192.0.2.1", "dev": "wan0", "metric": 100}]}`
}

const daemonLANFile = `{"version": 1, "interfaces": [{"name": "lan1", "type": "veth", "veth": {"peer": "lan1-peer"}}]}`

// daemonWANView is what the kernel holds of wan0: link, addresses, routes.
func (e *daemonEnv) wanView() string {
	e.t.Helper()
	return e.ip("-br", "link", "show", "dev", "wan0") + e.ip("-br", "addr", "show", "dev", "wan0") + e.ip("route", "show", "dev", "wan0")
}

func (e *daemonEnv) fileStatus(name string) (status.FileStatus, bool) {
	st, err := e.status()
	if err != nil {
		return status.FileStatus{}, false
	}
	for _, f := range st.Files {
		if f.Name == name {
			return f, true
		}
	}
	return status.FileStatus{}, false
}

// The daemon with --protect refuses an intent file change that would
// delete the uplink: it keeps running the previous version of the file
// (the uplink, its address and route untouched), says why in status, and
// goes on adopting other changes.
func TestAgentDaemonProtectRefusesIntentChange(t *testing.T) {
	e := daemonNewEnv(t)
	e.writeIntent("10-wan.json", daemonWANFile(false))
	e.writeIntent("20-lan.json", daemonLANFile)
	e.start("--protect", "wan0")
	e.waitFor("the default route through wan0", func() (bool, string) {
		v := e.wanView()
		return strings.Contains(v, "default via 192.0.2.1"), v
	})
	before := e.wanView()
	st, err := e.status()
	if err != nil || st.Version == 0 {
		t.Fatalf("no version of the intent: %+v %v", st, err)
	}
	adopted := st.Version

	e.writeIntent("10-wan.json", `{"version": 1}`)
	e.waitFor("the refusal in status", func() (bool, string) {
		f, _ := e.fileStatus("10-wan.json")
		errs := strings.Join(f.Errors, "\n")
		return len(f.Conditions) > 0 && !f.Conditions[0].Status &&
			strings.Contains(errs, "interface wan0 would be deleted: wan0 is protected") &&
			strings.Contains(errs, "route 0.0.0.0/0 via 192.0.2.1 dev wan0 would be withdrawn: wan0 is protected"), errs
	})
	if after := e.wanView(); after != before {
		t.Errorf("the refused change reached the kernel:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if st, err := e.status(); err != nil || st.Version != adopted {
		t.Errorf("the refused change became a version: %d, want %d (%v)", st.Version, adopted, err)
	}
	if n := len(e.logs.entries(map[string]string{"msg": "kernel operation", "op": "delete"})); n != 0 {
		t.Errorf("%d deletes ran:\n%s", n, e.logs.String())
	}
	// Still running, and other files still apply.
	e.writeIntent("20-lan.json", `{"version": 1, "interfaces": [{"name": "lan1", "type": "veth", "veth": {"peer": "lan1-peer"}, "addresses": ["198.51.100.1/24"]}]}`)
	e.waitFor("lan1's address", func() (bool, string) {
		out := e.ip("-br", "addr", "show", "dev", "lan1")
		return strings.Contains(out, "198.51.100.1/24"), out
	})
	if st, err := e.status(); err != nil || st.Version != adopted+1 {
		t.Errorf("the change of 20-lan.json: version %d, want %d (%v)", st.Version, adopted+1, err)
	}
	if after := e.wanView(); after != before {
		t.Errorf("the uplink changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// Without --protect, an uplink the intent marked "protected" and then
// left out stays as an orphan that status reports with why, also after a
// restart; declaring it again adopts it without a kernel operation.
func TestAgentDaemonProtectOrphans(t *testing.T) {
	e := daemonNewEnv(t)
	e.writeIntent("10-wan.json", daemonWANFile(true))
	e.writeIntent("20-lan.json", daemonLANFile)
	e.start()
	e.waitFor("the default route through wan0", func() (bool, string) {
		v := e.wanView()
		return strings.Contains(v, "default via 192.0.2.1"), v
	})
	before := e.wanView()
	ops := func() int { return len(e.logs.entries(map[string]string{"msg": "kernel operation"})) }

	e.writeIntent("10-wan.json", `{"version": 1}`)
	e.waitFor("wan0 orphaned in status", func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		it, ok := daemonItem(st, "interface/wan0")
		return ok && it.State == status.StateOrphaned && strings.Contains(it.Orphaned, "wan0 is protected"), it.State + " " + it.Orphaned
	})
	st, _ := e.status()
	for _, ref := range []string{"address/wan0/192.0.2.10/24", "route/main 0.0.0.0/0 metric 100"} {
		if it, ok := daemonItem(st, ref); !ok || it.State != status.StateOrphaned {
			t.Errorf("%s: %+v", ref, it)
		}
	}
	if after := e.wanView(); after != before {
		t.Errorf("the orphaned uplink changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// A restart keeps it: the state directory remembers the protection.
	e.stop()
	e.start()
	st, _ = e.status()
	if it, ok := daemonItem(st, "interface/wan0"); !ok || it.State != status.StateOrphaned {
		t.Errorf("after a restart: %+v", it)
	}
	if after := e.wanView(); after != before {
		t.Errorf("the orphaned uplink changed over a restart:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	n := ops()
	e.writeIntent("10-wan.json", daemonWANFile(true))
	e.waitFor("wan0 adopted", func() (bool, string) {
		st, _ := e.status()
		it, ok := daemonItem(st, "interface/wan0")
		return ok && it.State == "created", it.State
	})
	if got := ops(); got != n {
		t.Errorf("adopting the orphan ran %d kernel operations: %v", got-n, e.logs.entries(map[string]string{"msg": "kernel operation"})[n:])
	}
}
