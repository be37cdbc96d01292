package status

import "testing"

// A row says why an orphan is kept, else the last error with the
// failures, else what the item is blocked on; the first message is the
// first condition's that is not as it should be.
func TestShow(t *testing.T) {
	for it, want := range map[ItemStatus]string{
		{BlockedOn: "link/eth0"}:                          "link/eth0",
		{BlockedOn: "link/eth0", LastError: "EBUSY"}:      "EBUSY",
		{LastError: "EBUSY", Failures: 3}:                 "EBUSY (3 failures)",
		{LastError: "EBUSY", Orphaned: "protected: kept"}: "protected: kept",
	} {
		if got := it.Detail(); got != want {
			t.Errorf("%+v: %q, want %q", it, got, want)
		}
	}
	conds := []Condition{{Type: CondValid, Status: true, Message: "ok"}, {Type: CondDegraded, Status: true, Message: "2 items failed"}}
	if got := FirstMessage(conds); got != "2 items failed" {
		t.Errorf("first message %q", got)
	}
}
