package snapshot

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// A snapshot in the fleet's store (fleet.Layout.Snapshot): the same
// document, compact JSON, gzipped. A fleet member publishes it
// (agent/member's SnapshotPublisher); a rollout's pre-flight reads it
// back (ReadStored) to plan the host without reaching it. What is read
// is untrusted: its size in the store, its size unpacked, its version and
// every field are checked (Read).

// Bounds of a stored snapshot: MaxStored bytes in the store (etcd's
// default request limit is 1.5 MiB, key and overhead included), and
// MaxStoredJSON bytes of JSON once unpacked.
const (
	MaxStored     = 1_500_000
	MaxStoredJSON = 64 << 20
)

// ErrTooLarge is a snapshot larger than the store takes (MaxStored): it
// is not published.
var ErrTooLarge = errors.New("the snapshot is larger than the store takes")

// ErrInvalidStored is a stored snapshot ReadStored refuses: too large,
// not gzip, or not a document Read accepts (the error says which, and
// the JSON path of what is wrong).
var ErrInvalidStored = errors.New("invalid stored snapshot")

// EncodeStored is d as the store holds it: compact JSON, gzipped. A
// result over MaxStored is ErrTooLarge, with both sizes.
func (d *Document) EncodeStored() ([]byte, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding the snapshot: %w", err)
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(raw) // a bytes.Buffer does not fail
	zw.Close()
	if b.Len() > MaxStored {
		return nil, fmt.Errorf("%w: %d bytes gzipped (%d of JSON), the limit is %d", ErrTooLarge, b.Len(), len(raw), MaxStored)
	}
	return b.Bytes(), nil
}

// DecodeStored reads and checks a stored snapshot (untrusted): at most
// MaxStored bytes, gzip of at most MaxStoredJSON bytes of one document
// that Read accepts.
func DecodeStored(data []byte) (*Document, error) {
	if len(data) > MaxStored {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(data), MaxStored)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("the stored snapshot is not gzip: %w", err)
	}
	zr.Multistream(false)
	d, err := readAtMost(zr, MaxStoredJSON)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// ReadStored reads host's published snapshot from st (fleet.Layout.Snapshot)
// and checks it (DecodeStored), with the store version it was read at.
// A host that published none is an error wrapping store.ErrNotFound.
func ReadStored(ctx context.Context, st store.Store, l fleet.Layout, host string) (*Document, store.Version, error) {
	if err := fleet.CheckName("host", host); err != nil {
		return nil, 0, err
	}
	key := l.Snapshot(host)
	e, err := st.Read(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, fmt.Errorf("reading the snapshot of %s: %s holds none (its daemon publishes one with --publish-snapshot): %w", host, key, err)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading the snapshot of %s: %w", host, err)
	}
	d, err := DecodeStored(e.Value)
	if err != nil {
		return nil, 0, fmt.Errorf("%w %s (version %d, %d bytes): %w", ErrInvalidStored, key, e.Version, len(e.Value), err)
	}
	return d, e.Version, nil
}
