package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/netagent/netagent/store"
)

// GrantLease makes a lease of ttl, rounded up to whole seconds (etcd's
// unit; the server may raise a very short one to its minimum).
func (s *Store) GrantLease(ctx context.Context, ttl time.Duration) (store.LeaseID, error) {
	secs := int64((ttl + time.Second - 1) / time.Second)
	octx, cancel := s.op(ctx)
	defer cancel()
	resp, err := s.lease.Grant(octx, max(secs, 1))
	if err != nil {
		return 0, wrap(ctx, "granting a lease", err)
	}
	return store.LeaseID(resp.ID), nil
}

// KeepAlive renews the lease once.
func (s *Store) KeepAlive(ctx context.Context, id store.LeaseID) error {
	octx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.lease.KeepAliveOnce(octx, clientv3.LeaseID(id))
	return wrap(ctx, fmt.Sprintf("renewing lease %x", id), err)
}

// RevokeLease ends the lease and removes its keys; a lease already gone
// is no error.
func (s *Store) RevokeLease(ctx context.Context, id store.LeaseID) error {
	octx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.lease.Revoke(octx, clientv3.LeaseID(id))
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return nil
	}
	return wrap(ctx, fmt.Sprintf("revoking lease %x", id), err)
}

// WriteLeased is WriteCAS with key attached to the lease.
func (s *Store) WriteLeased(ctx context.Context, key string, value []byte, expect store.Version, id store.LeaseID) (store.Version, error) {
	if err := store.ValidateKey(key); err != nil {
		return 0, err
	}
	return s.put(ctx, key, value, expect, clientv3.WithLease(clientv3.LeaseID(id)))
}
