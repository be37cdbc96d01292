package host

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A trial journal planted as a link to another file is refused, and that
// file is not truncated. Before, createJournal opened the path following
// the link, with O_TRUNC: the target was emptied.
func TestJournalLinkIsNotTruncatedThrough(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, journalName)
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if j, err := createJournal(path); err == nil {
		j.Close()
		t.Error("createJournal through a link: nil error")
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep me" {
		t.Errorf("the link's target holds %q after createJournal, want it untouched", data)
	}
}

// A FIFO in the journal's place never blocks ReadJournal (recover).
// Before, os.Open of the FIFO blocked until a writer came.
func TestJournalFIFONeverBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), journalName)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := ReadJournal(path); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("ReadJournal of a FIFO: nil error, want a refusal")
		}
	case <-time.After(5 * time.Second):
		t.Error("ReadJournal blocked on a FIFO")
		if w, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil { // unblock it
			w.Close()
		}
		<-done
	}
}

// The journal's count file is a state file too: planted as a link, it is
// refused by createJournal (the link's target not truncated) and by the
// reader (the target not read as the count); a FIFO in its place never
// blocks the reader. Before, both opened journal.count following links
// (createJournal truncated the target) and the reader blocked on a FIFO.
func TestJournalCountIsAStateFile(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, countLine(5), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, journalName)
	if err := os.Symlink(victim, countPath(path)); err != nil {
		t.Fatal(err)
	}
	if n, why := readCount(countPath(path)); why == "" {
		t.Errorf("readCount through a link: %d, no damage named", n)
	}
	if j, err := createJournal(path); err == nil {
		j.Close()
		t.Error("createJournal with its count planted as a link: nil error")
	}
	if data, _ := os.ReadFile(victim); string(data) != string(countLine(5)) {
		t.Errorf("the link's target holds %q after createJournal, want it untouched", data)
	}

	fifo := filepath.Join(t.TempDir(), journalName+".count")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { _, why := readCount(fifo); done <- why }()
	select {
	case why := <-done:
		if why == "" {
			t.Error("readCount of a FIFO: no damage named")
		}
	case <-time.After(5 * time.Second):
		t.Error("readCount blocked on a FIFO")
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		<-done
	}
}
