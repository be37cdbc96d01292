package vm

import (
	"bytes"
	"strconv"
	"testing"
)

type cpioEntry struct {
	name         string
	mode         uint32
	rmajor, rmin uint32
	data         string
}

// readCPIO parses a newc archive up to its trailer, checking the alignment
// the kernel relies on.
func readCPIO(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var entries []cpioEntry
	for off := 0; ; {
		if off%4 != 0 || string(b[off:off+6]) != "070701" {
			t.Fatalf("offset %d: no aligned newc header", off)
		}
		field := func(i int) uint32 {
			v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatalf("offset %d field %d: %v", off, i, err)
			}
			return uint32(v)
		}
		size, namesize := int(field(6)), int(field(11))
		name := string(b[off+110 : off+110+namesize-1])
		dataOff := align4(off + 110 + namesize)
		if name == "TRAILER!!!" {
			return entries
		}
		entries = append(entries, cpioEntry{name, field(1), field(9), field(10), string(b[dataOff : dataOff+size])})
		off = align4(dataOff + size)
	}
}

func align4(n int) int { return (n + 3) &^ 3 }

func TestCPIOWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	cw := newCPIOWriter(&buf)
	must(t, cw.Dir("bin", 0o755))
	must(t, cw.CharDev("dev/console", 0o600, 5, 1))
	must(t, cw.File("bin/x", 0o755, []byte("hello")))
	must(t, cw.Symlink("bin/sh", "x"))
	must(t, cw.Close())
	if buf.Len()%4 != 0 {
		t.Errorf("archive length %d is not a multiple of 4", buf.Len())
	}
	want := []cpioEntry{
		{"bin", 0o040755, 0, 0, ""},
		{"dev/console", 0o020600, 5, 1, ""},
		{"bin/x", 0o100755, 0, 0, "hello"},
		{"bin/sh", 0o120777, 0, 0, "x"},
	}
	got := readCPIO(t, buf.Bytes())
	if len(got) != len(want) {
		t.Fatalf("got %d entries %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
