package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// Request is what another process asked of a running trial.
type Request string

// The requests.
const (
	RequestConfirmed Request = confirmName
	RequestReverted  Request = revertName
)

// WatchRequests reports the confirm and revert requests for the target's
// trial (RequestConfirm, RequestRevert) on the channel it returns, until
// ctx ends; one already made when it starts is reported at once.
func WatchRequests(ctx context.Context, stateDir string) (<-chan Request, error) {
	dir := filepath.Join(stateDir, TrialDir)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watching %s: %w", dir, err)
	}
	out := make(chan Request, 2)
	go func() {
		defer w.Close()
		defer close(out)
		if pendingRequest(dir, out) {
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Write) {
					if pendingRequest(dir, out) {
						return
					}
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				if pendingRequest(dir, out) { // events may have been lost: look
					return
				}
			}
		}
	}()
	return out, nil
}

// pendingRequest sends a request found in dir (revert first: the safer
// one); true when it found one.
func pendingRequest(dir string, out chan<- Request) bool {
	for _, r := range []Request{RequestReverted, RequestConfirmed} {
		if _, err := os.Stat(filepath.Join(dir, string(r))); !errors.Is(err, os.ErrNotExist) {
			out <- r
			return true
		}
	}
	return false
}

// Prober checks connectivity from inside the target (agent/probe): a nil
// error means the probe passed.
type Prober interface {
	Probe(ctx context.Context) error
	String() string
}
