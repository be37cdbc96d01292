// Package lineread reads lines of a bounded length: a file from outside
// the intent (a journal, a log in the state directory) with one huge line
// is refused after at most the bound, never read into memory whole.
package lineread

import (
	"bufio"
	"bytes"
	"errors"
)

// ErrTooLong: more than the bound came without a newline.
var ErrTooLong = errors.New("line too long")

// Read returns r's next line, its newline included, or ErrTooLong once
// more than maxLen bytes come without one (having allocated at most
// twice maxLen); at the end of r, what is left (a last line without its
// newline) and io.EOF.
func Read(r *bufio.Reader, maxLen int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > maxLen {
			return nil, ErrTooLong
		}
		if err == nil && line == nil {
			return bytes.Clone(frag), nil
		}
		if len(line)+len(frag) > cap(line) { // doubling: at most 2*max allocated in all
			line = append(make([]byte, 0, min(max(2*cap(line), len(line)+len(frag)), maxLen)), line...)
		}
		line = append(line, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}
