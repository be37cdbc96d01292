package dns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A resolv.conf swapped between netagent's file and a FIFO (as a local
// user with write access to its directory could) never blocks readOurs:
// before, it looked (Lstat) and then os.ReadFile'd the path, and an open
// of the FIFO swapped in between blocked for ever.
func TestReadOursNeverBlocksOnAFIFOSwappedIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "resolv.conf")
	ours := []byte(Header + "\nnameserver 192.0.2.53\n")
	if err := os.WriteFile(path, ours, 0o644); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	swapped := make(chan struct{})
	go func() { // swap the FIFO and netagent's file in turn
		defer close(swapped)
		for i := 0; !stop.Load(); i++ {
			tmp := filepath.Join(dir, "tmp")
			if i%2 == 0 {
				syscall.Mkfifo(tmp, 0o600)
			} else {
				os.WriteFile(tmp, ours, 0o644)
			}
			os.Rename(tmp, path)
		}
	}()
	done := make(chan error, 1)
	go func() {
		var foreign, read int
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
			data, err := readOurs(path)
			switch {
			case errors.Is(err, ErrForeign):
				foreign++
			case err != nil: // replaced between the look and the open: refused too
			case string(data) == string(ours):
				read++
			default:
				done <- fmt.Errorf("read %q", data)
				return
			}
		}
		if foreign == 0 || read == 0 {
			t.Errorf("%d reads refused as foreign, %d read whole: the swap was not seen both ways", foreign, read)
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("readOurs: %v, want the file whole or a refusal", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("readOurs blocked on a FIFO swapped in after its look") // (its goroutine stays blocked)
	}
	stop.Store(true)
	<-swapped
}
