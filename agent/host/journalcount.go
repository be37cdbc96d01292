package host

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// The journal's count (journal.go): how many records the trial wrote,
// in <journal>.count, one line of a fixed length,
//
//	<crc32c of the digits, 8 hex digits> <count, 16 decimal digits>\n
//
// created synced (at 0) with the journal, then written over in place (one
// write of 26 bytes within a sector) after each record is fsynced, before
// its wave runs. That write is not synced, on purpose: it is in the page
// cache, so every later reader of this boot (a recover after a kill, an
// operator's or a disk's damage to the journal) sees it, and it never
// says more than the disk holds, the record it counts being synced
// first. A power loss can only leave it behind (a record it does not
// count reads as one a crash tore, as before it existed), never ahead,
// and the kernel state it speaks of went with the power; a sync per wave
// would double the journal's cost.

const countDigits = 16

// journalCount is the count file of a journal being written.
type journalCount struct {
	f    *os.File
	path string
}

// countPath is the count file of the journal at path.
func countPath(journal string) string { return journal + ".count" }

// createCount starts the count file at path at 0 (replacing any),
// synced (its directory is the caller's to sync).
func createCount(path string) (*journalCount, error) {
	f, err := openJournal(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrJournal, err)
	}
	c := &journalCount{f: f, path: path}
	if err := c.set(0); err != nil {
		f.Close()
		return nil, err
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrJournal, path, err)
	}
	return c, nil
}

// set records that the journal holds n records (not synced: see above).
func (c *journalCount) set(n int) error {
	if _, err := c.f.WriteAt(countLine(n), 0); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrJournal, c.path, err)
	}
	return nil
}

func (c *journalCount) close() error { return c.f.Close() }

// countLine is the count file's content for n.
func countLine(n int) []byte {
	digits := fmt.Appendf(nil, "%0*d", countDigits, n)
	line := make([]byte, 9, 9+countDigits+1)
	hex.Encode(line[:8], binary.BigEndian.AppendUint32(nil, crc32.Checksum(digits, crcTable())))
	line[8] = ' '
	return append(append(line, digits...), '\n')
}

// readCountFile reads a count file as a state file (openJournal: no link
// followed, never blocking, its owner and mode checked), at most one byte
// more than a count line.
func readCountFile(path string) ([]byte, error) {
	f, err := openJournal(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 9+countDigits+2))
}

// readCount reads a count file; why says what is wrong with it, if
// anything (then n means nothing).
func readCount(path string) (n int, why string) {
	data, err := readCountFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return 0, fmt.Sprintf("%s is missing", path)
	case err != nil:
		return 0, fmt.Sprintf("reading %s: %v", path, err)
	case len(data) != 9+countDigits+1 || data[8] != ' ' || data[len(data)-1] != '\n':
		return 0, fmt.Sprintf("%s is damaged: not a count", path)
	}
	digits := data[9 : 9+countDigits]
	if !checksumOK(data[:8], digits) {
		return 0, fmt.Sprintf("%s is damaged: its checksum does not match", path)
	}
	v, err := strconv.Atoi(string(digits))
	if err != nil || v < 0 {
		return 0, fmt.Sprintf("%s is damaged: not a count", path)
	}
	return v, ""
}
