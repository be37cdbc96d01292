package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/internal/netnsx"
)

// Take reads the namespace netns ("": the host's) whole, and the records
// of its state directory stateDir. It writes nothing.
func Take(ctx context.Context, netns, stateDir string) (*Document, error) {
	t, err := netnsx.Open(netns)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	s, err := configurators.DumpKernel(ctx, t, stateDir)
	if err != nil {
		return nil, fmt.Errorf("reading the namespace: %w", err)
	}
	d := fromKernel(netns, s)
	if d.Records, err = readRecords(stateDir); err != nil {
		return nil, err
	}
	return d, nil
}

// skipped are the state directory's entries that are not records: the
// writer's lock, the version store and the nftables configurator's kept
// dumps (caches: no plan needs them).
var skipped = map[string]bool{"lock": true, "store": true, "nftables-dumps": true}

// readRecords reads the regular files of the state directory (but
// skipped), at most MaxRecords of at most maxRecordLen bytes.
func readRecords(dir string) ([]Record, error) {
	var out []Record
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case skipped[rel]:
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case !e.Type().IsRegular():
			return nil
		case len(out) == MaxRecords:
			return fmt.Errorf("more than %d files", MaxRecords)
		}
		data, err := readBounded(p)
		if err != nil {
			return err
		}
		out = append(out, Record{Path: filepath.ToSlash(rel), Content: data})
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("reading the state directory %s: %w", dir, err)
	}
	return out, nil
}

func readBounded(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRecordLen+1))
	if err == nil && len(data) > maxRecordLen {
		err = fmt.Errorf("%s is larger than %d bytes", p, maxRecordLen)
	}
	return data, err
}

// Write writes d as JSON.
func (d *Document) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(d)
}

// ReadFile reads and checks the document in the file (Read).
func ReadFile(name string) (*Document, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
}

// ErrNotHeld is a plan a snapshot cannot answer: the intent needs what
// runs only on the host (DNS, DHCP, RA).
var ErrNotHeld = errors.New("not in a snapshot")

// Load writes d's records into the state directory stateDir (empty or
// missing) and returns fakes of d's namespace, for the commands to run
// over (oneshot.Options.Fake) with that state directory. d is a
// document Read has checked.
func (d *Document) Load(stateDir string) (*configurators.Fake, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, err
	}
	for i, r := range d.Records {
		p := filepath.Join(stateDir, filepath.FromSlash(r.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, fmt.Errorf("records[%d]: %w", i, err)
		}
		if err := os.WriteFile(p, r.Content, 0o600); err != nil {
			return nil, fmt.Errorf("records[%d]: %w", i, err)
		}
	}
	f, err := configurators.NewFakeFrom(d.kernelState())
	if err != nil {
		return nil, fmt.Errorf("loading the snapshot: %w", err)
	}
	return f, nil
}
