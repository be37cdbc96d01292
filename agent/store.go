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

func (g *goodStore) path() string { return filepath.Join(g.dir, "accepted") }

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
		if err != nil || strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
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

func readStored(path string) (stored, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return stored{}, err
	}
	fi, err := os.Stat(path)
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

// write replaces a stored document atomically (a temporary file renamed).
func (g *goodStore) write(name string, raw []byte) error {
	final := filepath.Join(g.path(), url.PathEscape(name))
	tmp, err := os.CreateTemp(g.path(), ".tmp-*")
	if err != nil {
		return fmt.Errorf("storing accepted intent %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(raw)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), final)
	}
	if err != nil {
		return fmt.Errorf("storing accepted intent %s: %w", name, err)
	}
	g.written[name] = raw
	return nil
}

func (g *goodStore) remove(name string) error {
	err := os.Remove(filepath.Join(g.path(), url.PathEscape(name)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing accepted intent %s: %w", name, err)
	}
	delete(g.written, name)
	return nil
}
