//go:build !nofleet

package member

// The only file of the member that imports the etcd client (and through it
// gRPC and protobuf): a build with the tag nofleet takes etcd_nofleet.go
// instead, and leaves the three out of the binary (docs/binary-size.md).

import (
	"errors"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/etcd"
)

// Built reports whether this netagent has the fleet (no build tag nofleet).
const Built = true

// openStore connects to the fleet's store; timeouts: conn.Timeout bounds
// dialing and every request (the operator's client), else etcd's
// defaults do (the daemon's member).
func openStore(conn Conn, timeouts bool) (store.Store, error) {
	cfg := etcd.Config{Endpoints: conn.Endpoints, CAFile: conn.CAFile, CertFile: conn.CertFile, KeyFile: conn.KeyFile}
	if timeouts {
		cfg.DialTimeout, cfg.RequestTimeout = conn.Timeout, conn.Timeout
	}
	return etcd.New(cfg)
}

// tooLarge reports whether etcd refused a request as larger than it takes.
func tooLarge(err error) bool { return errors.Is(err, rpctypes.ErrRequestTooLarge) }
