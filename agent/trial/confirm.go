package trial

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/netagent/netagent/internal/killpoint"
	"github.com/netagent/netagent/internal/statefile"
)

// WriteConfirmed writes the document of a daemon's trial that is being
// confirmed (raw, as the socket gave it: indented again) as name in the
// intent directory dir, atomically, and returns its path. The trial's
// record says first that the confirm writes that file (h.Confirming, h
// nil: no record), so that a daemon killed once it is written finds the
// trial confirmed when it starts again (host's confirming.go). A file of
// that name written while the trial was pending is never overwritten. On
// an error nothing was written and the trial stays pending.
func WriteConfirmed(h Handle, dir, name string, raw []byte) (string, error) {
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err == nil {
		// Someone wrote it while the trial was pending: never overwrite
		// an operator's file.
		return "", fmt.Errorf("%s exists now (written while the trial was pending): move it away or roll the trial back (the trial stays pending)", path)
	}
	var doc bytes.Buffer
	if json.Indent(&doc, raw, "", "  ") != nil { // the socket's encoding compacts it
		doc.Reset()
		doc.Write(raw)
	}
	doc.WriteByte('\n')
	if h != nil {
		if err := h.Confirming(path, doc.Bytes()); err != nil {
			return "", fmt.Errorf("%w (the trial stays pending)", err)
		}
	}
	killpoint.At("confirm-recorded")
	if err := statefile.WriteAtomic(path, doc.Bytes()); err != nil {
		return "", fmt.Errorf("writing %s: %w (the trial stays pending)", path, err)
	}
	killpoint.At("confirm-written")
	return path, nil
}
