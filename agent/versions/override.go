package versions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/netagent/netagent/internal/statefile"
)

// A rollback through the daemon is an override: version N's merged intent
// takes the place of the documents' as the intended state until one of
// them changes (agent/history.go). It is kept in <state dir>/override.json
// so that it survives a restart of the daemon with the same files.

// OverrideFile holds the rollback in force, in the state directory.
const OverrideFile = "override.json"

// Override is a rollback through the daemon in force.
type Override struct {
	// Version is the version rolled back to; Intent its merged intent.
	Version int             `json:"version"`
	Intent  json.RawMessage `json:"intent"`
	// SetAside is the digest of the documents' merged intent that the
	// rollback took the place of.
	SetAside string `json:"setAside"`
}

// Back is the version the override rolled back to, as a Version to
// record again (RollbackTo).
func (o *Override) Back() *Version {
	return &Version{Number: o.Version, Intent: o.Intent, Digest: Digest(o.Intent)}
}

// LoadOverride reads the override in force in stateDir; nil when none. A
// damaged record is an error (errors.Is statefile.ErrDamaged), never "no
// rollback in force": the daemon would apply the documents the operator
// rolled back from.
func LoadOverride(stateDir string) (*Override, error) {
	var o Override
	ok, err := statefile.LoadJSON(filepath.Join(stateDir, OverrideFile), &o)
	switch {
	case errors.Is(err, statefile.ErrDamaged):
		return nil, fmt.Errorf("the rollback in force: %w", err)
	case err != nil:
		return nil, fmt.Errorf("reading the rollback in force: %w", err)
	case !ok:
		return nil, nil
	}
	return &o, nil
}

// SaveOverride stores o as the override in force in stateDir.
func SaveOverride(stateDir string, o *Override) error {
	if err := statefile.SaveJSON(filepath.Join(stateDir, OverrideFile), o); err != nil {
		return fmt.Errorf("storing the rollback: %w", err)
	}
	return nil
}

// RemoveOverride ends the override in force in stateDir, if any.
func RemoveOverride(stateDir string) error {
	if err := os.Remove(filepath.Join(stateDir, OverrideFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the rollback override: %w", err)
	}
	return nil
}

func init() {
	statefile.Register(OverrideFile, "the rollback in force: the version the daemon applies instead of its intent files until one of them changes")
}
