package status

import "fmt"

// What a table of the status shows of a condition list and an item (the
// status command's): choices about the status, for any reader.

// FirstMessage is the message of the first condition that is not as it
// should be (Valid, Converged true; Degraded false); "" if none is.
func FirstMessage(conds []Condition) string {
	for _, c := range conds {
		bad := !c.Status
		if c.Type == CondDegraded {
			bad = c.Status
		}
		if bad && c.Message != "" {
			return c.Message
		}
	}
	return ""
}

// Detail is what an item's row says of it: why it is orphaned and kept,
// else its last error (with its consecutive failures), else what it is
// blocked on.
func (it ItemStatus) Detail() string {
	if it.Orphaned != "" {
		return it.Orphaned
	}
	if it.LastError == "" {
		return it.BlockedOn
	}
	if it.Failures > 0 {
		return fmt.Sprintf("%s (%d failures)", it.LastError, it.Failures)
	}
	return it.LastError
}
