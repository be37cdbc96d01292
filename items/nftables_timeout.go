package items

import (
	"errors"
	"fmt"
	"time"
)

// A set's timeout (NftSet.Timeout) is for sets that rules or other tools
// fill at runtime (nft's `add @set { ip saddr timeout 1m }`, fail2ban):
// the set has the kernel's timeout flag, and its elements that carry a
// timeout are the kernel's, not the intent's: the read-back leaves them
// out, so they are neither drift nor deleted.
//
// The kernel gives every element of a set with a default timeout that
// timeout, also one added with "timeout 0s" (nft_add_set_elem; checked
// on the kernel): an element the intent declared would expire, be missed
// and be added again at each reconcile. So a set with a non-zero timeout
// declares no elements; a set with "timeout": "0s" (the flag alone, no
// default) may declare elements, which the kernel keeps until deleted.

// NftSetTimeout returns the set's default element timeout, and whether it
// has the timeout flag.
func NftSetTimeout(s NftSet) (time.Duration, bool, error) {
	if s.Timeout == "" {
		return 0, false, nil
	}
	d, err := time.ParseDuration(s.Timeout)
	if err != nil {
		return 0, false, fmt.Errorf("timeout %q is not a duration such as 1h or 90s", s.Timeout)
	}
	if d < 0 || d%time.Millisecond != 0 {
		return 0, false, fmt.Errorf("timeout %q: want a duration of whole milliseconds, 0s or more", s.Timeout)
	}
	return d, true, nil
}

// ErrNftTimeoutElements is a set with a default timeout that declares
// elements: the kernel would expire them.
var ErrNftTimeoutElements = errors.New("a set with a timeout gives every element that timeout, declared ones too, " +
	"so they would expire and be added again at each reconcile: declare no elements, or use \"timeout\": \"0s\" " +
	"(the timeout flag alone: declared elements stay, those added with a timeout expire)")

// CheckNftSetTimeout checks a set's timeout and that a set with a
// default timeout declares no elements.
func CheckNftSetTimeout(s NftSet) error {
	d, _, err := NftSetTimeout(s)
	if err != nil {
		return err
	}
	if d > 0 && len(s.Elements) > 0 {
		return ErrNftTimeoutElements
	}
	return nil
}

// canonicalTimeout spells a timeout as the read-back does ("1h0m0s").
func canonicalTimeout(s string) string {
	if d, ok, err := NftSetTimeout(NftSet{Timeout: s}); err == nil && ok {
		return d.String()
	}
	return s
}
