package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/netagent/netagent/store"
)

// LeaseTTL is how long a controller's lease lasts without renewal.
const LeaseTTL = 15 * time.Second

// leaseRecord is the value of rollouts/<id>/lease.
type leaseRecord struct {
	Owner   string    `json:"owner"`
	Expires time.Time `json:"expires"`
}

// lease takes or renews the rollout's lease for c.Owner: it is written
// (CAS) when absent, expired, or ours with less than half its TTL left.
func (c *Controller) lease(ctx context.Context, now time.Time) error {
	key := leaseKey(c.Layout, c.ID)
	e, err := c.Store.Read(ctx, key)
	var cur leaseRecord
	switch {
	case errors.Is(err, store.ErrNotFound):
		e.Version = store.NoVersion
	case err != nil:
		return fmt.Errorf("reading the lease of rollout %s: %w", c.ID, err)
	default:
		if json.Unmarshal(e.Value, &cur) != nil {
			cur = leaseRecord{} // unreadable: taken over
		}
		if cur.Owner != c.Owner && now.Before(cur.Expires) {
			return fmt.Errorf("rollout %s: %w (%s, until %s)", c.ID, ErrLeaseHeld, cur.Owner, cur.Expires.Format(time.RFC3339))
		}
		if cur.Owner == c.Owner && cur.Expires.Sub(now) > LeaseTTL/2 {
			return nil
		}
	}
	raw, _ := json.Marshal(leaseRecord{Owner: c.Owner, Expires: now.Add(LeaseTTL)})
	if _, err := c.Store.WriteCAS(ctx, key, raw, e.Version); err != nil {
		if errors.Is(err, store.ErrCASFailed) {
			return fmt.Errorf("rollout %s: %w (it changed hands)", c.ID, ErrLeaseHeld)
		}
		return fmt.Errorf("writing the lease of rollout %s: %w", c.ID, err)
	}
	return nil
}

// Release gives the lease up if c holds it, so that another controller
// need not wait for it to expire (a controller that dies cannot: its
// lease expires LeaseTTL after its last renewal).
func (c *Controller) Release(ctx context.Context) error {
	key := leaseKey(c.Layout, c.ID)
	e, err := c.Store.Read(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the lease of rollout %s: %w", c.ID, err)
	}
	var cur leaseRecord
	if json.Unmarshal(e.Value, &cur) != nil || cur.Owner != c.Owner {
		return nil
	}
	if err := c.Store.DeleteCAS(ctx, key, e.Version); err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrCASFailed) {
		return fmt.Errorf("releasing the lease of rollout %s: %w", c.ID, err)
	}
	return nil
}
