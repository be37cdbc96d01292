package vm

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// recorder is a testing.TB that notes failures and skips instead of acting
// on them, so tests can check what the harness does to its caller. Fatal and
// Skip end the goroutine, as they do on a real T; run gives them one.
type recorder struct {
	testing.TB
	mu             sync.Mutex
	errors         []string
	fatal, skipped string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatal(args ...any) { r.end(&r.fatal, fmt.Sprint(args...)) }

func (r *recorder) Fatalf(format string, args ...any) { r.end(&r.fatal, fmt.Sprintf(format, args...)) }

func (r *recorder) Skip(args ...any) { r.end(&r.skipped, fmt.Sprint(args...)) }

func (r *recorder) end(field *string, msg string) {
	r.mu.Lock()
	*field = msg
	r.mu.Unlock()
	runtime.Goexit()
}

// record runs fn against a recorder in its own goroutine and waits for it.
func record(t *testing.T, fn func(tb testing.TB)) *recorder {
	t.Helper()
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r
}
