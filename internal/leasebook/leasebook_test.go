package leasebook

import "testing"

// Each change counts once; a Drop of nothing is no change; a snapshot is
// a copy.
func TestBook(t *testing.T) {
	var b Book[*int]
	one, two := new(int), new(int)
	b.Hold("eth0", one)
	b.Hold("eth1", two)
	b.Drop("eth2")
	snap, ver := b.Snapshot()
	if ver != 2 || len(snap) != 2 || b.Get("eth0") != one {
		t.Fatalf("snapshot %v version %d", snap, ver)
	}
	b.Drop("eth0")
	if b.Get("eth0") != nil || b.Version() != 3 || len(snap) != 2 {
		t.Errorf("after Drop: %v version %d, snapshot %v", b.Get("eth0"), b.Version(), snap)
	}
	if b.IgnoresKept() {
		t.Error("ignores kept leases from the start")
	}
	b.IgnoreKept()
	if !b.IgnoresKept() {
		t.Error("IgnoreKept not kept")
	}
}
