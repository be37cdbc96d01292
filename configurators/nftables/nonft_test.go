package nftables

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// noNftKernel is a kernel built without nf_tables: every request fails as
// the netlink socket does there, with EPROTONOSUPPORT.
type noNftKernel struct{}

func (noNftKernel) fail(what string) error {
	return fmt.Errorf("nftables: %s: %w", what, kernelErr(os.NewSyscallError("socket", unix.EPROTONOSUPPORT)))
}

func (k noNftKernel) ApplyBatch(uint32, []Op) error { return k.fail("batch") }
func (k noNftKernel) DumpTable(f, n string) (Dumped, bool, error) {
	return Dumped{}, false, k.fail("table " + f + "/" + n)
}
func (k noNftKernel) ListTables() ([][2]string, error) { return nil, k.fail("listing tables") }

// TestNoNftables: on a kernel without nf_tables the read-back finds no
// tables (so an intent without an nftables section converges, as the
// read-back of every apply asks for them), and an intended table fails
// its create with ErrNoNftables, naming the kernel's lack.
func TestNoNftables(t *testing.T) {
	got, err := readBack(noNftKernel{})
	if err != nil || len(got) != 0 {
		t.Fatalf("read-back without nf_tables: %v, %v; want no tables and no error", got, err)
	}
	c := &configurator{k: noNftKernel{}}
	err = c.Create(context.Background(), &items.NftTable{Family: "inet", Table: "netagent"})
	if !errors.Is(err, ErrNoNftables) {
		t.Fatalf("create without nf_tables: %v, want ErrNoNftables", err)
	}
	if err := c.Delete(context.Background(), &items.NftTable{Family: "inet", Table: "netagent"}); !errors.Is(err, ErrNoNftables) {
		t.Errorf("delete without nf_tables: %v, want ErrNoNftables", err)
	}
	if other := kernelErr(unix.EPERM); errors.Is(other, ErrNoNftables) {
		t.Errorf("EPERM taken for a kernel without nf_tables: %v", other)
	}
}
