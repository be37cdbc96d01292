package firewall

import (
	"context"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// SysctlAdoptions lists the intended sysctls netagent does not own whose
// parameter the namespace has, as found (the hint's spelling of an equal
// value, its Deps): an equal one Equal to the item, a differing one with
// the found value. It leaves out an owned key, the other name of an owned
// forwarding key (moving between them restores first: no adoption), a
// missing parameter and a bad key; the create then saves the found value
// as the original and writes only the differing one, and the delete
// writes the found value back.
func TestSysctlAdoptions(t *testing.T) {
	f := NewFake(map[string]string{
		"/proc/sys/net/ipv4/ip_forward":          "1",
		"/proc/sys/net/ipv4/conf/all/rp_filter":  "2",
		"/proc/sys/net/ipv4/tcp_rmem":            "4096\t131072\t6291456",
		"/proc/sys/net/ipv6/conf/all/forwarding": "0",
	})
	dir := t.TempDir()
	equal := &items.Sysctl{Key: "net.ipv4.tcp_rmem", Value: "4096 131072  6291456", Deps: []dg.ItemRef{items.InterfaceRef("lo")}}
	differs := &items.Sysctl{Key: "net.ipv4.conf.all.rp_filter", Value: "1"}
	forward := &items.Sysctl{Key: "net.ipv4.ip_forward", Value: "1"}
	owned := &items.Sysctl{Key: "net.ipv6.conf.all.forwarding", Value: "1"}
	missing := &items.Sysctl{Key: "net.ipv4.conf.eth9.rp_filter", Value: "1"}
	bad := &items.Sysctl{Key: "net..x", Value: "1"}
	_, c, err := f.configurators(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, owned); err != nil {
		t.Fatal(err)
	}
	if err := c.store.remember("net.ipv4.conf.all.forwarding", "0"); err != nil { // ip_forward's other name
		t.Fatal(err)
	}
	found, err := f.SysctlAdoptions(dir, dg.New("intended", equal, differs, forward, owned, missing, bad))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 {
		t.Errorf("adoptions %v, want %s and %s only", found, dg.Ref(equal), dg.Ref(differs))
	}
	if got := found[dg.Ref(equal)]; got == nil || !got.Equal(equal) || got.(*items.Sysctl).Value != equal.Value {
		t.Errorf("adoption of the equal key: %v, want %v", got, equal)
	}
	if got := found[dg.Ref(differs)]; got == nil || got.Equal(differs) || got.(*items.Sysctl).Value != "2" {
		t.Errorf("adoption of the differing key: %v, want the value found, 2", got)
	}
	writes := f.ProcSys.writes
	for _, s := range []*items.Sysctl{equal, differs} {
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.ProcSys.writes - writes; got != 1 {
		t.Errorf("the adoptions wrote %d values, want 1 (the differing one)", got)
	}
	if err := c.Delete(ctx, differs); err != nil {
		t.Fatal(err)
	}
	if v := f.ProcSys.files["/proc/sys/net/ipv4/conf/all/rp_filter"]; v != "2" {
		t.Errorf("rp_filter after the delete: %q, want the found 2 back", v)
	}
	if again, err := f.SysctlAdoptions(dir, dg.New("intended", equal)); err != nil || len(again) > 0 {
		t.Errorf("adoptions of an owned key: %v %v, want none", again, err)
	}
}
