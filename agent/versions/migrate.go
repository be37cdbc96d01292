package versions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/netagent/netagent/store"
)

// migrate moves the versions of the former format (one file per version
// in dir, Dir of a state directory) into st, then removes dir. It is
// idempotent and safe against a crash at any point and against another
// process migrating at the same time: the index is written (compare-
// and-swap) with the versions it lacks, numbers and all, before anything
// is removed; a version already in the index is not imported again.
func migrate(ctx context.Context, st store.Store, dir string, keep int) error {
	nums, err := oldNumbers(dir)
	if err != nil || nums == nil {
		return err
	}
	for {
		x, xv, err := readIndex(ctx, st)
		if err != nil {
			return err
		}
		last := 0
		if e := x.last(); e != nil {
			last = e.Number
		}
		next, added := x, false
		next.Versions = slices.Clip(x.Versions)
		for _, n := range nums[max(0, len(nums)-keep):] {
			if n <= last {
				continue
			}
			v, err := readOld(filepath.Join(dir, fmt.Sprintf("%08d.json", n)))
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed meanwhile (another migration)
			}
			if err != nil {
				return fmt.Errorf("migrating version %d: %w", n, err)
			}
			if !next.references(v.Digest) {
				if err := writeIntent(ctx, st, v.Digest, v.Intent); err != nil {
					return fmt.Errorf("migrating version %d: %w", n, err)
				}
			}
			next.Versions = append(next.Versions, indexEntry{Meta: v.Meta(), Documents: v.Documents})
			added = true
		}
		if !added {
			break
		}
		if extra := len(next.Versions) - keep; extra > 0 {
			next.Versions = next.Versions[extra:]
		}
		if _, err := writeIndex(ctx, st, next, xv); errors.Is(err, store.ErrCASFailed) {
			continue
		} else if err != nil {
			return fmt.Errorf("migrating the versions: %w", err)
		}
		break
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing the migrated versions: %w", err)
	}
	return nil
}

// oldNumbers lists the version files of the former format in dir,
// ascending; nil when dir does not exist (an empty slice when it holds
// none).
func oldNumbers(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the versions to migrate: %w", err)
	}
	out := []int{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(name, ".") || !e.Type().IsRegular() {
			continue // a temporary file a crashed writer left
		}
		if n, err := strconv.Atoi(name); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// readOld reads a version file of the former format (whoever wrote it:
// the streamed encoding or json.Marshal, indented or not); its intent is
// compacted, the form its digest is of.
func readOld(path string) (*Version, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v Version
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, v.Intent); err != nil {
		return nil, err
	}
	v.Intent = compact.Bytes()
	if v.Number <= 0 || v.Digest == "" || len(v.Intent) == 0 {
		return nil, errors.New("incomplete version file")
	}
	return &v, nil
}
