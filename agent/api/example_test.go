package api_test

import (
	"fmt"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/status"
)

// The events a watcher gets when an uplink loses its carrier: the status
// before and after, compared as the loop compares them at the end of a
// turn.
func ExampleEventsBetween() {
	before := &status.Status{Ready: true, Links: []status.LinkStatus{{Name: "uplink0", AdminUp: true, Carrier: true, OperUp: true}},
		Items: []status.ItemStatus{{Item: "route/10.20.0.0/24", File: "20-routes.json", State: "created"}}}
	after := &status.Status{Links: []status.LinkStatus{{Name: "uplink0", AdminUp: true}},
		Items: []status.ItemStatus{{Item: "route/10.20.0.0/24", File: "20-routes.json", State: status.StateBlocked, BlockedOn: "uplink0 has no carrier"}}}
	for _, e := range api.EventsBetween(api.SnapshotOf(before), api.SnapshotOf(after), after, time.Now()) {
		fmt.Println(e)
	}
	// Output:
	// item route/10.20.0.0/24 (20-routes.json): created -> blocked: uplink0 has no carrier
	// link uplink0: up -> no-carrier
	// ready true -> false
}
