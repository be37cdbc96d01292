//go:build nofleet

package member

// A build without the fleet (build tag nofleet): no etcd client, gRPC or
// protobuf in the binary; opening the fleet's store fails with ErrNoFleet.

import "github.com/netagent/netagent/store"

// Built reports whether this netagent has the fleet (no build tag nofleet).
const Built = false

func openStore(Conn, bool) (store.Store, error) { return nil, ErrNoFleet }

func tooLarge(error) bool { return false }
