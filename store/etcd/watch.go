package etcd

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/netagent/netagent/store"
)

// Watch follows the keys under prefix (see store.Store). A lost
// connection does not end it: the client reconnects and resumes after
// the last revision delivered, so nothing is lost or repeated, unless
// the history was compacted meanwhile (store.ErrWatchClosed). The
// member losing its leader ends it too (store.ErrWatchClosed).
func (s *Store) Watch(ctx context.Context, prefix string, from store.Version) (*store.Watch, error) {
	dir, err := store.ValidatePrefix(prefix)
	if err != nil {
		return nil, err
	}
	return store.NewWatch(ctx, func(ctx context.Context, emit store.Emit) error {
		return s.follow(ctx, dir, from, emit)
	}), nil
}

func (s *Store) follow(ctx context.Context, dir string, from store.Version, emit store.Emit) error {
	if from == store.NoVersion {
		entries, rev, err := s.list(ctx, dir)
		if err != nil {
			return fmt.Errorf("%w: %w", store.ErrWatchClosed, err)
		}
		if err := store.EmitListing(ctx, emit, entries, rev); err != nil {
			return err
		}
		from = rev
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	ch := s.watcher.Watch(wctx, dir, clientv3.WithPrefix(), clientv3.WithRev(int64(from)+1))
	for resp := range ch {
		if resp.CompactRevision != 0 {
			return fmt.Errorf("%w: %q from revision %s: etcd compacted its history up to %d", store.ErrWatchClosed, dir, from, resp.CompactRevision)
		}
		if err := resp.Err(); err != nil {
			return fmt.Errorf("%w: %q: %w", store.ErrWatchClosed, dir, err)
		}
		for _, ev := range resp.Events {
			if !emit(event(ev)) {
				return ctx.Err()
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%w: %q: the etcd client closed the watch", store.ErrWatchClosed, dir)
}

func event(ev *clientv3.Event) store.Event {
	e := store.Entry{Key: string(ev.Kv.Key), Version: store.Version(ev.Kv.ModRevision)}
	if ev.Type == mvccpb.DELETE {
		return store.Event{Type: store.Delete, Entry: e}
	}
	e.Value = ev.Kv.Value
	return store.Event{Type: store.Put, Entry: e}
}
