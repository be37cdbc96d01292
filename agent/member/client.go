package member

// The operator's side of the fleet (`netagent fleet`): the documents of
// hosts and groups in the fleet's store, written compare-and-swap on their
// store version (of two pushers expecting the same version exactly one
// wins), and the hosts' statuses (fleetstatus.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// ErrNoFleet: this netagent was built with the tag nofleet (etcd.go).
var ErrNoFleet = errors.New("this netagent was built without the fleet (build tag nofleet)")

// Conn says how to reach the fleet's store (etcd).
type Conn struct {
	Endpoints                 []string
	Prefix                    string // the fleet's key prefix (fleet.Layout)
	CAFile, CertFile, KeyFile string
	// Timeout bounds connecting and every request (0: etcd's defaults).
	Timeout time.Duration
}

// Client is an operator's connection to the fleet's store.
type Client struct {
	conn   Conn
	st     store.Store
	layout fleet.Layout
}

// Dial connects to the store, lazily: the first operation finds out
// whether it answers. An error is a configuration the store refuses.
func Dial(conn Conn) (*Client, error) {
	st, err := openStore(conn, true)
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, st: st, layout: fleet.Layout{Prefix: conn.Prefix}}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.st.Close() }

// Store and Layout are the client's store and key layout, for the
// fleet's other clients (package agent/rollout).
func (c *Client) Store() store.Store   { return c.st }
func (c *Client) Layout() fleet.Layout { return c.layout }

// Place is a host's or a group's directory of documents: one of the two
// names is set.
type Place struct{ Host, Group string }

// Dir is the place's directory.
func (c *Client) Dir(p Place) string {
	if p.Host != "" {
		return c.layout.Host(p.Host)
	}
	return c.layout.Group(p.Group)
}

// DocKey is the key of the document doc of the place.
func (c *Client) DocKey(p Place, doc string) string { return c.Dir(p) + "/" + doc }

// Source names a key as the daemon does (hosts/h1/base.json), or as it is.
func (c *Client) Source(key string) string {
	if s := c.layout.Source(key); s != "" {
		return s
	}
	return key
}

// Failure is what went wrong with an operation, as the operator reads it.
type Failure int

const (
	// FailStore: the store is unreachable or failed (the command's exit 3).
	FailStore Failure = iota
	// FailConflict: a compare-and-swap was refused, nothing written (exit 5).
	FailConflict
	// FailInvalid: a document not found, or larger than the store takes
	// (exit 1).
	FailInvalid
)

// Explain says what err of an operation means: its kind and a message
// naming the document or the endpoints.
func (c *Client) Explain(err error) (Failure, string) {
	var cas *store.CASError
	switch {
	case errors.As(err, &cas):
		stored := "it does not exist"
		if cas.Stored != store.NoVersion {
			stored = "it is at version " + cas.Stored.String()
		}
		expected := "not to exist"
		if cas.Expected != store.NoVersion {
			expected = "at version " + cas.Expected.String()
		}
		return FailConflict, fmt.Sprintf("%s changed: expected it %s, but %s (someone else wrote it); nothing was written",
			c.Source(cas.Key), expected, stored)
	case errors.Is(err, store.ErrNotFound):
		return FailInvalid, err.Error()
	case tooLarge(err):
		return FailInvalid, fmt.Sprintf("the document is larger than etcd takes in one request (its --max-request-bytes, 1.5 MiB by default): split it into several documents; nothing was written (%v)", err)
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return FailStore, fmt.Sprintf("etcd at %s unreachable within %v: %v", strings.Join(c.conn.Endpoints, ", "), c.conn.Timeout, err)
	}
	return FailStore, fmt.Sprintf("etcd at %s: %v", strings.Join(c.conn.Endpoints, ", "), err)
}

// Get returns a document as stored.
func (c *Client) Get(ctx context.Context, p Place, doc string) (store.Entry, error) {
	return c.st.Read(ctx, c.DocKey(p, doc))
}

// Delete removes a document on version ifVersion, or (ifVersion nil) on
// the version it reads just before; it returns the version removed.
func (c *Client) Delete(ctx context.Context, p Place, doc string, ifVersion *int64) (store.Version, error) {
	key := c.DocKey(p, doc)
	var expect store.Version
	if ifVersion != nil {
		expect = store.Version(*ifVersion)
	} else {
		cur, err := c.st.Read(ctx, key)
		if err != nil {
			return 0, err
		}
		expect = cur.Version
	}
	return expect, c.st.DeleteCAS(ctx, key, expect)
}

// StoredDoc is a stored document as `fleet get --json` prints it (and,
// without Document, what `fleet delete --json` removed): the stored bytes
// as Document when they are JSON (an intent, a trial envelope), else as
// Bytes (base64; the store is not trusted to hold what push wrote).
type StoredDoc struct {
	Source   string          `json:"source"`
	Key      string          `json:"key"`
	Version  int64           `json:"version"`
	Document json.RawMessage `json:"document,omitempty"`
	Bytes    []byte          `json:"bytes,omitempty"`
}

// DeletedDocOf is the StoredDoc of the document of source, at key, that a
// delete removed at version v.
func DeletedDocOf(source, key string, v store.Version) StoredDoc {
	return StoredDoc{Source: source, Key: key, Version: int64(v)}
}

// StoredDocOf is the StoredDoc of e, the document of source.
func StoredDocOf(source string, e store.Entry) StoredDoc {
	d := StoredDoc{Source: source, Key: e.Key, Version: int64(e.Version)}
	if json.Valid(e.Value) {
		d.Document = e.Value
	} else {
		d.Bytes = e.Value
	}
	return d
}

// ListedDoc is a document as `fleet list` shows it.
type ListedDoc struct {
	Source  string `json:"source"`
	Key     string `json:"key"`
	Version int64  `json:"version"`
	Bytes   int    `json:"bytes"`
}

// List lists the documents of a place, or (p zero) of every host and
// group.
func (c *Client) List(ctx context.Context, p Place) ([]ListedDoc, error) {
	dirs := []string{c.layout.Hosts(), c.layout.Groups()}
	if p != (Place{}) {
		dirs = []string{c.Dir(p)}
	}
	docs := []ListedDoc{}
	for _, dir := range dirs {
		entries, _, err := c.st.List(ctx, dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			docs = append(docs, ListedDoc{Source: c.Source(e.Key), Key: e.Key, Version: int64(e.Version), Bytes: len(e.Value)})
		}
	}
	return docs, nil
}
