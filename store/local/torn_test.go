package local_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/local"
)

// What a power cut can leave after the last acknowledged write (a last
// line cut short, a tail of NUL bytes where the file grew but its blocks
// were never written, a line with NULs inside ending in its newline) is
// cut when the store opens, under its lock and saying so in the log; the
// acknowledged writes before it are all there and the store reads and
// writes on. Before, a NUL line ending in a newline made every read and
// write fail with a decode error until someone mended the log by hand.
func TestTornTailIsCut(t *testing.T) {
	for name, tail := range map[string]string{
		"cut short":                `{"op":"put","rev":3,"ke`,
		"NULs":                     strings.Repeat("\x00", 61),
		"NULs and the newline":     strings.Repeat("\x00", 60) + "\n",
		"NULs inside a line":       `{"op":"put","rev":3,"key":"k",` + strings.Repeat("\x00", 40) + `"inline":true}` + "\n",
		"a line cut short by NULs": `{"op":"del","rev":3,"key":"k"}` + strings.Repeat("\x00", 20) + "\n",
		"two NUL lines":            strings.Repeat("\x00", 30) + "\n" + strings.Repeat("\x00", 30) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			s := open(t, dir, local.Options{NoFSNotify: true})
			if _, err := s.WriteCAS(ctx, "k", []byte("a"), store.NoVersion); err != nil {
				t.Fatal(err)
			}
			v2, err := s.WriteCAS(ctx, "j", []byte("b"), store.NoVersion)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, local.LogFile)
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, append(bytes.Clone(good), tail...))

			var logged bytes.Buffer
			log := logrus.New()
			log.SetOutput(&logged)
			r, err := local.Open(dir, local.Options{NoFSNotify: true, Log: log})
			if err != nil {
				t.Fatalf("Open with a torn tail: %v", err)
			}
			t.Cleanup(func() { r.Close() })
			if data, _ := os.ReadFile(path); !bytes.Equal(data, good) {
				t.Errorf("the log after Open: %q, want the %d bytes of whole records (the tail cut)", data, len(good))
			}
			if !strings.Contains(logged.String(), "cut the torn end") {
				t.Errorf("Open said nothing of the cut: %q", logged.String())
			}
			for _, s := range []*local.Store{r, s} {
				if e, err := s.Read(ctx, "k"); err != nil || string(e.Value) != "a" {
					t.Errorf("Read of an acknowledged write: %q, %v", e.Value, err)
				}
			}
			v3, err := r.WriteCAS(ctx, "j", []byte("c"), v2)
			if err != nil {
				t.Fatalf("a write after the cut: %v", err)
			}
			if e, err := s.Read(ctx, "j"); err != nil || string(e.Value) != "c" || e.Version != v3 {
				t.Errorf("Read of the write after the cut: %q@%s, %v", e.Value, e.Version, err)
			}
		})
	}
}

// A damaged line followed by a whole record is no tear (the record after
// it was an acknowledged write): it is reported, naming the log and the
// byte, by Open, and the log is left as it is, never cut (which would
// lose the acknowledged writes after it).
func TestDamagedMiddleLineIsReported(t *testing.T) {
	for name, bad := range map[string]string{
		"NULs":    strings.Repeat("\x00", 30) + "\n",
		"garbage": "not json\n",
	} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			s := open(t, dir, local.Options{NoFSNotify: true})
			if _, err := s.WriteCAS(ctx, "k", []byte("a"), store.NoVersion); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, local.LogFile)
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			damaged := append(append(bytes.Clone(good), bad...), `{"op":"put","rev":2,"key":"j","inline":true,"value":"Yg=="}`+"\n"...)
			writeFile(t, path, damaged)
			if r, err := local.Open(dir, local.Options{NoFSNotify: true}); err == nil {
				r.Close()
				t.Errorf("Open of a log damaged before its last record: no error")
			} else if want := path + " at byte " + strconv.Itoa(len(good)); !strings.Contains(err.Error(), want) {
				t.Errorf("Open: %v; want it to name %q", err, want)
			}
			if _, err := s.WriteCAS(ctx, "k", []byte("x"), 1); err == nil {
				t.Errorf("a write over a damaged log: no error")
			}
			if data, _ := os.ReadFile(path); !bytes.Equal(data, damaged) {
				t.Errorf("the damaged log was changed: %q", data)
			}
		})
	}
}

// The log is a state file: a FIFO in its place never blocks Open, and a
// log replaced by a link is neither read nor written through (the link's
// target is left as it is). Before, the log was opened following links
// (a write appended to the target) and a FIFO blocked Open.
func TestLogIsAStateFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, local.LogFile), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		s, err := local.Open(dir, local.Options{NoFSNotify: true})
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Open with a FIFO for a log: nil error, want a refusal")
		}
	case <-time.After(5 * time.Second):
		t.Error("Open blocked on a FIFO for a log")
		if w, err := os.OpenFile(filepath.Join(dir, local.LogFile), os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		<-done
	}

	dir = t.TempDir()
	s := open(t, dir, local.Options{NoFSNotify: true})
	v1, err := s.WriteCAS(ctx, "k", []byte("a"), store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, local.LogFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	writeFile(t, victim, data)
	os.Remove(path)
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteCAS(ctx, "k", []byte("b"), v1); err == nil {
		t.Error("a write with the log replaced by a link: nil error")
	}
	if got, _ := os.ReadFile(victim); !bytes.Equal(got, data) {
		t.Errorf("the link's target was written through: %q", got)
	}
	if _, err := local.Open(dir, local.Options{NoFSNotify: true}); err == nil {
		t.Error("Open with the log replaced by a link: nil error")
	}
}

// A planted log line of 100 MiB is damage, found with a bounded
// allocation: Open fails naming the log and the byte, and nothing is
// cut. Before, the log's new bytes were read whole (100 MiB allocated)
// and the line, having no newline, was taken for a torn write and cut.
func TestHugeLogLineBounded(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := open(t, dir, local.Options{NoFSNotify: true})
	if _, err := s.WriteCAS(ctx, "k", []byte("a"), store.NoVersion); err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := filepath.Join(dir, local.LogFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	planted := append(bytes.Clone(good), bytes.Repeat([]byte{'a'}, 100<<20)...)
	writeFile(t, path, planted)
	planted = nil
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := local.Open(dir, local.Options{NoFSNotify: true})
	runtime.ReadMemStats(&after)
	if err == nil {
		r.Close()
		t.Error("Open with a 100 MiB line: nil error")
	} else if !strings.Contains(err.Error(), "longer than") {
		t.Errorf("Open: %v; want the line named too long", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 48<<20 {
		t.Errorf("Open allocated %d MiB for a 100 MiB line, want at most 48", alloc>>20)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != int64(len(good))+100<<20 {
		t.Errorf("the log was cut: %v", err)
	}
}
