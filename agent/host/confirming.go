package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/netagent/netagent/internal/safefile"
	"github.com/netagent/netagent/internal/statefile"
)

// A daemon's confirm writes the trial's document into its intent
// directory, and only then ends the trial (Confirm). A daemon killed
// between the two would leave a pending trial whose document is in the
// intent directory: reverted at the next start, then applied again from
// the file, with status saying "reverted" while the trial's content is
// in force. So the confirm is recorded first (TrialRun.Confirming: the
// file and a digest of what it writes, in the trial record, durably), and
// Recover completes a trial found confirming whose file holds what the
// confirm wrote: confirmed, not reverted. Killed before the file was
// written (it is absent, or holds something else), the trial reverts as
// any trial left pending. Every kill point gives a status that says what
// is in force:
//
//	killed before   trial record    file     at the next start
//	Confirming      pending         absent   reverted
//	the file        confirming      absent   reverted
//	Confirm         confirming      written  confirmed (completed)
//	after Confirm   removed         written  confirmed (last.json)

// Confirming is the confirm of a trial in progress (Trial.Confirming):
// the intent file it writes and what the file holds once written.
type Confirming struct {
	File   string `json:"file"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Confirming records, durably, that the trial's confirm writes content
// into file (an intent file, absolute once recorded); the caller writes
// the file next, then calls Confirm.
func (tr *TrialRun) Confirming(file string, content []byte) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("recording the confirm of the trial: %w", err)
	}
	sum := sha256.Sum256(content)
	t := tr.Trial
	t.Confirming = &Confirming{File: abs, Size: int64(len(content)), SHA256: hex.EncodeToString(sum[:])}
	if err := tr.rewrite(t); err != nil {
		return fmt.Errorf("recording the confirm of the trial: %w", err)
	}
	return nil
}

// rewrite replaces the trial record with t, atomically and durably.
func (tr *TrialRun) rewrite(t Trial) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if err := statefile.SaveRecord(trialPath(tr.rt.stateDir, trialName), data, true); err != nil {
		return err
	}
	tr.Trial = t
	return nil
}

// written reports whether the confirm's file holds what it writes. The
// file is read as an intent names one: never blocking, never through a
// link, at most one byte more than the confirm wrote.
func (c *Confirming) written() bool {
	data, _, err := safefile.ReadNamed(c.File, c.Size+1)
	if err != nil || int64(len(data)) != c.Size {
		return false
	}
	sum := sha256.Sum256(data)
	want, err := hex.DecodeString(c.SHA256)
	return err == nil && bytes.Equal(sum[:], want)
}

// completeConfirm ends the pending trial t as confirmed, if its confirm
// had written its file when its process ended (see Confirming): its
// outcome is recorded and it is no longer pending. ok false: t is to be
// reverted.
func (r *Runtime) completeConfirm(t *Trial) (rec *Recovery, ok bool, err error) {
	c := t.Confirming
	if c == nil || !c.written() {
		return nil, false, nil
	}
	reason := fmt.Sprintf("confirmed when recovered: the process that confirmed it (pid %d) ended after writing %s, before recording the confirm", t.PID, c.File)
	if err := RecordOutcome(r.stateDir, Outcome{PID: t.PID, Result: "confirmed", Reason: reason, At: time.Now()}); err != nil {
		return nil, true, err
	}
	return &Recovery{Trial: *t, Confirmed: true}, true, removeTrial(r.stateDir)
}
