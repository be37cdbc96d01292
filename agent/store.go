package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/netagent/netagent/internal/statefile"
)

// goodStore keeps the last accepted version of every document in
// <state dir>/accepted/, one file per document (the name path-escaped), so
// that an agent restarted with a broken intent file still applies that
// file's last good version instead of withdrawing it, and so that the
// socket API's document survives a restart. It never writes to an intent
// source.
type goodStore struct {
	dir     string
	written map[string][]byte // what the files hold, as far as we know
}

// acceptedDir is the store's directory under the state directory.
const acceptedDir = "accepted"

func (g *goodStore) path() string { return filepath.Join(g.dir, acceptedDir) }

// stored is a document as the store holds it.
type stored struct {
	raw []byte
	at  time.Time // when it was accepted (the file's mtime)
}

// load reads every stored document.
func (g *goodStore) load() (map[string]stored, error) {
	entries, err := os.ReadDir(g.path())
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]stored{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading accepted intents: %w", err)
	}
	out := make(map[string]stored, len(entries))
	g.written = map[string][]byte{}
	for _, e := range entries {
		name, err := url.PathUnescape(e.Name())
		if err != nil || strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() || statefile.IsSetAside(e.Name()) {
			continue
		}
		doc, err := readStored(filepath.Join(g.path(), e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading accepted intent %s: %w", name, err)
		}
		out[name] = doc
		g.written[name] = doc.raw
	}
	return out, nil
}

// readStored reads a stored document: a record (statefile.LoadRecord:
// no link followed, a version and a checksum), so that a damaged one
// stops the start naming it instead of being dropped with a warning (the
// document's last good version would be lost, and its objects withdrawn
// while its file is broken) or a forged one applied.
func readStored(path string) (stored, error) {
	raw, err := statefile.LoadRecord(path)
	if err != nil {
		return stored{}, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return stored{}, err
	}
	return stored{raw: raw, at: fi.ModTime()}, nil
}

// save makes the store hold exactly the accepted documents of docs.
func (g *goodStore) save(docs *docSet) error {
	if err := os.MkdirAll(g.path(), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", g.path(), err)
	}
	if g.written == nil {
		g.written = map[string][]byte{}
	}
	var errs []error
	for name, d := range docs.docs {
		if d.good != nil && !bytes.Equal(g.written[name], d.goodRaw) {
			errs = append(errs, g.write(name, d.goodRaw))
		}
	}
	for name := range g.written {
		if d := docs.docs[name]; d == nil || d.good == nil {
			errs = append(errs, g.remove(name))
		}
	}
	return errors.Join(errs...)
}

// write replaces a stored document durably, as a record
// (statefile.SaveRecord).
func (g *goodStore) write(name string, raw []byte) error {
	if err := statefile.SaveRecord(filepath.Join(g.path(), url.PathEscape(name)), raw, true); err != nil {
		return fmt.Errorf("storing accepted intent %s: %w", name, err)
	}
	g.written[name] = raw
	return nil
}

func init() {
	statefile.Register(acceptedDir+"/*", "the last accepted version of an intent document (or the socket API's), "+
		"applied while its file is invalid (lost with it: a broken file then withdraws what it configured)")
}

func (g *goodStore) remove(name string) error {
	err := os.Remove(filepath.Join(g.path(), url.PathEscape(name)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing accepted intent %s: %w", name, err)
	}
	delete(g.written, name)
	return nil
}
