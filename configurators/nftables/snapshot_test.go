package nftables

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// roundTrip is s through its JSON, as a snapshot document carries it.
func roundTrip(t *testing.T, s *State) *State {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var out State
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// A State of a kernel without nf_tables loads into a fake that has none:
// its listing and the intended tables' clashes fail as the kernel's do.
func TestStateUnavailable(t *testing.T) {
	f := NewFakeKernel()
	if err := f.Load(&State{Unavailable: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ListTables(); !errors.Is(err, ErrNoNftables) {
		t.Errorf("listing: %v", err)
	}
	if got, err := f.ReadBack(); err != nil || len(got) != 0 {
		t.Errorf("read-back: %v %v", got, err)
	}
	if err := (&State{Unavailable: true, Tables: []TableState{{Family: "ip", Name: "x"}}}).Check(); err == nil || !strings.Contains(err.Error(), "tables") {
		t.Errorf("check: %v", err)
	}
}
