package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/netagent/netagent/store"
)

// Defaults of Config.
const (
	DefaultDialTimeout    = 5 * time.Second
	DefaultRequestTimeout = 5 * time.Second
)

// Config says how to reach an etcd cluster.
type Config struct {
	// Endpoints are the members' client URLs: http://host:2379 or
	// https://host:2379.
	Endpoints []string
	// CAFile verifies the servers' certificates (PEM); CertFile and
	// KeyFile are the client certificate and key the servers require
	// (--client-cert-auth). With none of the three the connection is
	// plain (or verified against the system's CAs for https endpoints).
	CAFile, CertFile, KeyFile string
	// Namespace is prepended to every key, unseen by the caller: several
	// fleets, or tests, on one cluster. Empty: none.
	Namespace string
	// DialTimeout bounds connecting (DefaultDialTimeout).
	DialTimeout time.Duration
	// RequestTimeout bounds every operation when ctx allows longer
	// (DefaultRequestTimeout): one that gets no answer fails with
	// store.ErrUnavailable.
	RequestTimeout time.Duration
	// Logger receives the client's own logs; nil: none.
	Logger *zap.Logger
}

// Store is the etcd backend (see the package doc).
type Store struct {
	client  *clientv3.Client
	kv      clientv3.KV
	watcher clientv3.Watcher
	lease   clientv3.Lease
	timeout time.Duration
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Leaser    = (*Store)(nil)
	_ store.Compactor = (*Store)(nil)
)

// New connects to the cluster of cfg. It does not wait for a member to
// answer: operations fail with store.ErrUnavailable until one does.
func New(cfg Config) (*Store, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints")
	}
	tlsConf, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	lg := cfg.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:          cfg.Endpoints,
		TLS:                tlsConf,
		DialTimeout:        orDefault(cfg.DialTimeout, DefaultDialTimeout),
		MaxCallSendMsgSize: 4 << 20, // the server's --max-request-bytes is the limit that counts
		MaxCallRecvMsgSize: math.MaxInt32,
		Logger:             lg,
	})
	if err != nil {
		return nil, fmt.Errorf("etcd %v: %w", cfg.Endpoints, err)
	}
	s := &Store{client: c, kv: c.KV, watcher: c.Watcher, lease: c.Lease, timeout: orDefault(cfg.RequestTimeout, DefaultRequestTimeout)}
	if cfg.Namespace != "" {
		s.kv = namespace.NewKV(c.KV, cfg.Namespace)
		s.watcher = namespace.NewWatcher(c.Watcher, cfg.Namespace)
		s.lease = namespace.NewLease(c.Lease, cfg.Namespace)
	}
	return s, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// tlsConfig builds the client's TLS from cfg's files; nil when none is
// given.
func tlsConfig(cfg Config) (*tls.Config, error) {
	if cfg.CAFile == "" && cfg.CertFile == "" && cfg.KeyFile == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("etcd CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd CA %s: no PEM certificate in it", cfg.CAFile)
		}
		conf.RootCAs = pool
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, errors.New("etcd client certificate: give both the certificate and its key")
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("etcd client certificate: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// Close closes the connection; running watches end.
func (s *Store) Close() error { return s.client.Close() }

// op bounds one request by the request timeout.
func (s *Store) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// wrap turns an etcd client error into a store error: the caller's own
// cancellation stays what it is; no answer in time, no leader, or an
// unreachable cluster is store.ErrUnavailable.
func wrap(ctx context.Context, what string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
	if unavailable(err) {
		return fmt.Errorf("%s: %w: %w", what, store.ErrUnavailable, err)
	}
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("%s: %w: %w", what, store.ErrLeaseExpired, err)
	}
	if status.Code(err) == codes.Canceled || errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s: %w: %w", what, store.ErrClosed, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func unavailable(err error) bool {
	switch {
	case errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, rpctypes.ErrNoLeader),
		errors.Is(err, rpctypes.ErrTimeout),
		errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail),
		errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost),
		errors.Is(err, rpctypes.ErrLeaderChanged),
		errors.Is(err, rpctypes.ErrNotCapable):
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}

// Read returns key's entry.
func (s *Store) Read(ctx context.Context, key string) (store.Entry, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Entry{}, err
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	resp, err := s.kv.Get(octx, key)
	if err != nil {
		return store.Entry{}, wrap(ctx, fmt.Sprintf("reading %q", key), err)
	}
	if len(resp.Kvs) == 0 {
		return store.Entry{}, store.NotFound(key)
	}
	kv := resp.Kvs[0]
	return store.Entry{Key: key, Value: kv.Value, Version: store.Version(kv.ModRevision)}, nil
}

// WriteCAS stores value under key if its version is expect: one
// transaction comparing the key's mod_revision.
func (s *Store) WriteCAS(ctx context.Context, key string, value []byte, expect store.Version) (store.Version, error) {
	if err := store.ValidateKey(key); err != nil {
		return 0, err
	}
	return s.put(ctx, key, value, expect)
}

func (s *Store) put(ctx context.Context, key string, value []byte, expect store.Version, opts ...clientv3.OpOption) (store.Version, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	resp, err := s.kv.Txn(octx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", int64(expect))).
		Then(clientv3.OpPut(key, string(value), opts...)).
		Else(clientv3.OpGet(key, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return 0, wrap(ctx, fmt.Sprintf("writing %q", key), err)
	}
	if !resp.Succeeded {
		return 0, &store.CASError{Key: key, Expected: expect, Stored: storedVersion(resp)}
	}
	return store.Version(resp.Header.Revision), nil
}

// storedVersion is the version a failed transaction's Else read.
func storedVersion(resp *clientv3.TxnResponse) store.Version {
	if len(resp.Responses) == 0 {
		return store.NoVersion
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return store.NoVersion
	}
	return store.Version(kvs[0].ModRevision)
}

// DeleteCAS removes key if its version is expect.
func (s *Store) DeleteCAS(ctx context.Context, key string, expect store.Version) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	resp, err := s.kv.Txn(octx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", int64(expect))).
		Then(clientv3.OpDelete(key)).
		Else(clientv3.OpGet(key, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return wrap(ctx, fmt.Sprintf("deleting %q", key), err)
	}
	if !resp.Succeeded {
		stored := storedVersion(resp)
		if stored == store.NoVersion {
			return store.NotFound(key)
		}
		return &store.CASError{Key: key, Expected: expect, Stored: stored}
	}
	if resp.Responses[0].GetResponseDeleteRange().GetDeleted() == 0 {
		return store.NotFound(key) // expect was NoVersion and so was the key
	}
	return nil
}

// List returns the entries under prefix, read at one revision.
func (s *Store) List(ctx context.Context, prefix string) ([]store.Entry, store.Version, error) {
	dir, err := store.ValidatePrefix(prefix)
	if err != nil {
		return nil, 0, err
	}
	return s.list(ctx, dir)
}

// ListKeys returns the keys under prefix and their versions, read at one
// revision, without their values (a keys-only range).
func (s *Store) ListKeys(ctx context.Context, prefix string) ([]store.Entry, store.Version, error) {
	dir, err := store.ValidatePrefix(prefix)
	if err != nil {
		return nil, 0, err
	}
	return s.list(ctx, dir, clientv3.WithKeysOnly())
}

func (s *Store) list(ctx context.Context, dir string, opts ...clientv3.OpOption) ([]store.Entry, store.Version, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	opts = append([]clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend)}, opts...)
	resp, err := s.kv.Get(octx, dir, opts...)
	if err != nil {
		return nil, 0, wrap(ctx, fmt.Sprintf("listing %q", dir), err)
	}
	entries := make([]store.Entry, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		entries = append(entries, store.Entry{Key: string(kv.Key), Value: kv.Value, Version: store.Version(kv.ModRevision)})
	}
	return entries, store.Version(resp.Header.Revision), nil
}

// Compact drops the cluster's history up to revision rev: watches from
// before it end with store.ErrWatchClosed. (etcd operators usually let
// the server do it: --auto-compaction-retention.)
func (s *Store) Compact(ctx context.Context, rev store.Version) error {
	octx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.client.Compact(octx, int64(rev), clientv3.WithCompactPhysical())
	return wrap(ctx, fmt.Sprintf("compacting at %s", rev), err)
}
