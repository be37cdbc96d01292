package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/plural"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// A trial is a change that reverts unless confirmed (`netagent try`). Its
// files live in <state dir>/trial/:
//
//	trial.json      the pending trial (Trial), written atomically before
//	                the trial's first change and removed when it is
//	                confirmed or reverted: while it exists, the trial is
//	                pending, and whoever next takes the target's lock and
//	                finds it reverts it first (Recover)
//	journal         the before-images of everything the trial changed
//	                (journal.go), fsynced before each change
//	journal.count   how many records the journal holds, written after
//	                each: a journal that does not account for them (lost,
//	                cut short, damaged) is never reverted as if it were
//	                whole (RevertIncompleteError)
//	confirm, revert requests from another process (`netagent confirm`,
//	                `netagent rollback`) to the process that runs the trial
//	                (RequestConfirm, RequestRevert)
//
// Reverting is a reconcile: the intended state is what the kernel holds
// now, with every journaled item replaced by its before-image (deleted
// where it was absent, put back with its old attributes where it existed).
// Like every reconcile it is idempotent, so a revert that is killed is
// finished by reverting again. Once it converged, the foreign objects the
// journal saved that the kernel no longer holds (dropped with a link the
// trial changed) are added back; that is idempotent too. Settings netagent took from objects it does
// not own (a NIC's MTU, a sysctl) come back with the item: the item was
// absent before the trial, so the revert deletes it, and the configurator
// gives back the originals it recorded.

// TrialDir is the trial directory's name in the state directory.
const TrialDir = "trial"

const (
	trialName   = "trial.json"
	confirmName = "confirm"
	revertName  = "revert"
)

// Trial is a pending trial: trial.json.
type Trial struct {
	// Identity is the namespace instance (and boot) the trial changed: a
	// trial found on another one (after a reboot, or the namespace made
	// anew) changed a kernel state that is gone.
	Identity statefile.NsIdentity `json:"identity"`
	PID      int                  `json:"pid"`
	Started  time.Time            `json:"started"`
	Deadline time.Time            `json:"deadline"`
	// Files are the trial's intent files (render.Load), the read-back
	// hint of the revert.
	Files map[string][]byte `json:"files"`
	// Previous, if known, is the intent that ran before the trial (the
	// daemon's): after a reboot the revert converges to it.
	Previous map[string][]byte `json:"previous,omitempty"`
	Probes   []string          `json:"probes,omitempty"`
	// Confirming: a daemon's confirm of the trial had begun (see
	// confirming.go).
	Confirming *Confirming `json:"confirming,omitempty"`
}

// TrialRun is a trial in progress in this process.
type TrialRun struct {
	rt      *Runtime
	journal *Journal
	Trial   Trial
}

func trialPath(stateDir, name string) string { return filepath.Join(stateDir, TrialDir, name) }

// PendingTrial returns the pending trial of the target whose state
// directory is stateDir, or nil.
func PendingTrial(stateDir string) (*Trial, error) {
	data, err := statefile.LoadRecord(trialPath(stateDir, trialName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, statefile.ErrDamaged) {
		return nil, &DamagedTrialError{Path: trialPath(stateDir, trialName), Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the pending trial: %w", err)
	}
	var t Trial
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, &DamagedTrialError{Path: trialPath(stateDir, trialName), Err: err}
	}
	return &t, nil
}

// DamagedTrialError is a trial record (trial.json) that cannot be read: a
// trial is pending, but which, what intent it applied and on which boot
// are unknown. Every command that would revert it refuses, until
// RecoverAcceptIncomplete reverts what the journal holds without it.
type DamagedTrialError struct {
	Path string
	Err  error
}

func (e *DamagedTrialError) Error() string {
	return fmt.Sprintf("%v: the pending trial's record %s is damaged (%v): it cannot be reverted as recorded; "+
		"`netagent recover --accept-incomplete` reverts what the journal holds and drops the trial", ErrDamagedTrial, e.Path, e.Err)
}

// Is makes errors.Is(err, ErrDamagedTrial) hold.
func (e *DamagedTrialError) Is(target error) bool { return target == ErrDamagedTrial }

func (e *DamagedTrialError) Unwrap() error { return e.Err }

// AbandonedTrialError is a pending trial whose process ended without
// confirming or reverting it (no one holds the target's lock), met by a
// command that writes nothing (plan, check) or that asked the process to
// act on it (confirm, rollback: AwaitAnswer): it is left pending for
// `netagent recover` (or the next apply, try or daemon start) to revert.
type AbandonedTrialError struct {
	Trial Trial
}

func (e *AbandonedTrialError) Error() string {
	return fmt.Sprintf("the trial of pid %d (started %s) is pending: its process ended without confirming or reverting it, "+
		"and the kernel still holds what it changed: run `netagent recover` to revert it (apply, try and the daemon's start revert it too; plan and check revert nothing)",
		e.Trial.PID, e.Trial.Started.Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrTrialPending) hold.
func (e *AbandonedTrialError) Is(target error) bool { return target == ErrTrialPending }

// TrialForReader is what a command that writes nothing (plan, check)
// finds of the target's trial, taking no lock: nil, nil when none is
// pending; the trial and the process running it (the holder of the
// target's lock) while one runs; an *AbandonedTrialError when one is
// pending that no process runs (it waits for a Recover, which the reader
// must not do: a dry run writes nothing).
func TrialForReader(stateDir string) (*Trial, *Holder, error) {
	t, err := PendingTrial(stateDir)
	if err != nil || t == nil {
		return nil, nil, err
	}
	h, err := HolderOf(stateDir)
	if err != nil {
		return nil, nil, err
	}
	if h == nil {
		return t, nil, &AbandonedTrialError{Trial: *t}
	}
	return t, h, nil
}

// BeginTrial records the trial t (its Identity and PID are filled in) and
// starts its journal; from then on every reconcile of the Runtime journals
// before-images before it changes the kernel. The caller holds the
// target's lock, and has recovered any earlier pending trial (Recover).
func (r *Runtime) BeginTrial(t Trial) (*TrialRun, error) {
	if old, err := PendingTrial(r.stateDir); err != nil || old != nil {
		if err == nil {
			err = fmt.Errorf("a trial (pid %d, started %s) is pending: recover it first", old.PID, old.Started.Format(time.RFC3339))
		}
		return nil, err
	}
	id, err := statefile.Identify(r.target)
	if err != nil {
		return nil, err
	}
	t.Identity, t.PID = id, os.Getpid()
	dir := filepath.Join(r.stateDir, TrialDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	for _, n := range []string{confirmName, revertName} {
		os.Remove(filepath.Join(dir, n)) // stale requests
	}
	j, err := createJournal(filepath.Join(dir, journalName))
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(t)
	if err != nil {
		j.Close()
		return nil, err
	}
	if err := statefile.SaveRecord(filepath.Join(dir, trialName), data, true); err != nil {
		j.Close()
		return nil, fmt.Errorf("recording the trial: %w", err)
	}
	j.atRisk = func(devs []string) ([]l3.ForeignObject, error) { return l3.ForeignAtRisk(r.target, devs) }
	j.chosen = func(ifs []*items.Interface) ([]*items.Interface, error) { return link.KernelChosen(r.target, ifs) }
	j.adopted = func(creates *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
		if !r.adopt {
			return nil, nil
		}
		return r.ns.Adoptions(r.stateDir, creates)
	}
	r.before, r.journal = j.Record, j
	return &TrialRun{rt: r, journal: j, Trial: t}, nil
}

// Confirm makes the trial permanent: its record and journal are removed.
func (tr *TrialRun) Confirm() error {
	tr.stop()
	if err := RecordOutcome(tr.rt.stateDir, Outcome{PID: tr.Trial.PID, Result: "confirmed", At: time.Now()}); err != nil {
		return err
	}
	return removeTrial(tr.rt.stateDir)
}

// Update records a change of the trial's intent files and of the intent
// before it (Files and Previous) while it is pending: the daemon's intent
// files edited during its trial. The record is replaced atomically.
func (tr *TrialRun) Update(files, previous map[string][]byte) error {
	t := tr.Trial
	t.Files, t.Previous = files, previous
	if err := tr.rewrite(t); err != nil {
		return fmt.Errorf("updating the trial record: %w", err)
	}
	return nil
}

// Revert puts back what the trial changed (see RevertIntended) and
// removes the trial, recording why it was reverted.
func (tr *TrialRun) Revert(ctx context.Context, reason string) (*Result, error) {
	tr.stop()
	res, _, err := tr.rt.revert(ctx, &tr.Trial, reason, true, false)
	return res, err
}

// Batches returns how many journal records the trial wrote.
func (tr *TrialRun) Batches() int { return tr.journal.batches }

func (tr *TrialRun) stop() {
	tr.rt.before, tr.rt.journal = nil, nil
	tr.journal.Close()
}

// RevertIncompleteError is a revert that did not start because the trial
// journal does not account for every record the trial wrote (see
// journal.go: missing, emptied, cut short, damaged): it would not have
// put back what the missing records held. Nothing was changed and the
// trial stays pending; its outcome says RevertIncomplete and why.
type RevertIncompleteError struct {
	Trial Trial
	// Unaccounted names what the journal does not account for.
	Unaccounted string
}

func (e *RevertIncompleteError) Error() string { return OutcomeRevertIncomplete + ": " + e.why() }

// why is the error without its name: the outcome's reason.
func (e *RevertIncompleteError) why() string {
	return fmt.Sprintf("the trial journal does not account for %s: nothing was reverted, and the trial (pid %d, started %s) stays pending; "+
		"`netagent recover --accept-incomplete` reverts what the journal holds and drops the trial, leaving the rest as the trial left it",
		e.Unaccounted, e.Trial.PID, e.Trial.Started.Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrRevertIncomplete) hold.
func (e *RevertIncompleteError) Is(target error) bool { return target == ErrRevertIncomplete }

// Recovery says what Recover did.
type Recovery struct {
	Trial Trial
	// Confirmed: the trial's confirm had written its file when its
	// process ended; it was completed, not reverted (Result is nil).
	Confirmed bool
	// Lost: the trial ran on another boot or namespace instance, whose
	// kernel state is gone; the revert converged to what the journal (and
	// Previous) say the state was before it.
	Lost bool
	// Torn: the journal's last record was cut short by the crash (its
	// change never started).
	Torn bool
	// Unaccounted (RecoverAcceptIncomplete only) names what the journal
	// did not account for: the revert put back the rest, and this stays
	// as the trial left it.
	Unaccounted string
	Result      *Result
}

// Recover reverts the target's pending trial, if there is one (a process
// that ran it died: the caller holds the target's lock, so no trial runs
// now), and returns what it did; nil when no trial was pending. When the
// journal does not account for every record the trial wrote, it changes
// nothing and fails with a *RevertIncompleteError (ErrRevertIncomplete).
func (r *Runtime) Recover(ctx context.Context) (*Recovery, error) { return r.recover(ctx, false) }

// RecoverAcceptIncomplete is Recover that, when the journal does not
// account for every record (a RevertIncompleteError), reverts what it
// holds and drops the trial anyway, saying so in Recovery.Unaccounted and
// the outcome: what the missing records held stays as the trial left it.
// The operator's way out of a damaged journal (`netagent recover
// --accept-incomplete`).
func (r *Runtime) RecoverAcceptIncomplete(ctx context.Context) (*Recovery, error) {
	return r.recover(ctx, true)
}

func (r *Runtime) recover(ctx context.Context, accept bool) (*Recovery, error) {
	t, err := PendingTrial(r.stateDir)
	if dmg := (*DamagedTrialError)(nil); accept && errors.As(err, &dmg) {
		return r.recoverDamaged(ctx, dmg)
	}
	if err != nil || t == nil {
		return nil, err
	}
	if rec, ok, err := r.completeConfirm(t); ok {
		return rec, err
	}
	rec := &Recovery{Trial: *t}
	if id, err := statefile.Identify(r.target); err == nil && (id.BootID != t.Identity.BootID || id.NsID != t.Identity.NsID) {
		rec.Lost = true
	}
	_, rec.Torn, _ = ReadJournal(trialPath(r.stateDir, journalName))
	if rec.Lost && len(t.Previous) > 0 {
		prev, err := render.Load(t.Previous)
		if err != nil {
			return nil, fmt.Errorf("rendering the intent before the trial: %w", err)
		}
		if rec.Result, err = Converge(ctx, r.Kernel(), prev); err != nil {
			return nil, err
		}
		RecordOutcome(r.stateDir, Outcome{PID: t.PID, Result: "reverted", Reason: "recovered after a reboot: converged to the intent before the trial", At: time.Now()})
		return rec, removeTrial(r.stateDir)
	}
	reason := fmt.Sprintf("recovered: the process that ran it (pid %d) ended without confirming or reverting it", t.PID)
	if rec.Lost {
		reason = "recovered after a reboot (or the namespace was made anew): the kernel lost the trial's changes"
	}
	rec.Result, rec.Unaccounted, err = r.revert(ctx, t, reason, !rec.Lost, accept)
	return rec, err
}

// recoverDamaged reverts a pending trial whose record is damaged
// (RecoverAcceptIncomplete): from its journal alone, without its intent
// as the read-back hint, and without putting back someone else's objects
// (on which boot the trial saved them is unknown); the record is dropped.
func (r *Runtime) recoverDamaged(ctx context.Context, dmg *DamagedTrialError) (*Recovery, error) {
	t := &Trial{}
	lost := fmt.Sprintf("the trial record %s (%v): its intent and where it ran; someone else's objects it saved are not put back", dmg.Path, dmg.Err)
	res, unaccounted, err := r.revert(ctx, t, "recovered from its journal alone (--accept-incomplete): the trial record was damaged", false, true)
	if unaccounted != "" {
		lost += "; and " + unaccounted
	}
	return &Recovery{Trial: *t, Unaccounted: lost, Result: res}, err
}

// revert converges to the before-images of t's journal, then (with
// foreign: the kernel that the trial changed is still there) puts back
// the foreign objects the journal saved that the kernel dropped, and
// removes the trial once all that succeeded; a failed revert leaves it
// pending, for the next Recover. A journal that does not account for
// every record the trial wrote fails it before anything changes
// (RevertIncompleteError, recorded as the outcome), unless accept: then
// it reverts what the journal holds, and unaccounted names the rest.
func (r *Runtime) revert(ctx context.Context, t *Trial, reason string, foreign, accept bool) (res *Result, unaccounted string, err error) {
	path := trialPath(r.stateDir, journalName)
	jd, err := readJournal(path)
	if err != nil {
		return nil, "", err
	}
	if unaccounted = jd.Unaccounted(path); unaccounted != "" {
		if !accept {
			e := &RevertIncompleteError{Trial: *t, Unaccounted: unaccounted}
			if err := RecordOutcome(r.stateDir, Outcome{PID: t.PID, Result: OutcomeRevertIncomplete, Reason: e.why(), At: time.Now()}); err != nil {
				return nil, "", errors.Join(e, err)
			}
			return nil, "", e
		}
		reason += "; only in part (--accept-incomplete): the journal did not account for " + unaccounted + ", which stays as the trial left it"
	}
	res, err = r.revertJournaled(ctx, t, jd, reason, foreign)
	return res, unaccounted, err
}

// revertJournaled is revert with the journal read.
func (r *Runtime) revertJournaled(ctx context.Context, t *Trial, jd journaled, reason string, foreign bool) (*Result, error) {
	var hint *dg.Graph
	if len(t.Files) > 0 {
		if h, err := render.Load(t.Files); err == nil {
			hint = h
		} // else read back without a hint: only the spelling differs
	}
	res, err := r.revertConverge(ctx, hint, jd.Images)
	if err != nil {
		return nil, err
	}
	if !res.Converged() {
		return res, fmt.Errorf("the revert did not converge (%s); the trial stays pending: `netagent recover` tries again", plural.N(len(res.Problems), "item"))
	}
	if foreign && len(jd.Foreign) > 0 {
		n, err := l3.RestoreForeign(r.target, jd.Foreign)
		killPoint()
		if n > 0 {
			r.log.WithField("objects", n).Info("the revert put back foreign objects the trial's changes had made the kernel drop")
		}
		if err != nil {
			return res, fmt.Errorf("the revert converged, but %w; the trial stays pending: `netagent recover` tries again", err)
		}
	}
	if err := RecordOutcome(r.stateDir, Outcome{PID: t.PID, Result: "reverted", Reason: reason, At: time.Now()}); err != nil {
		return res, err
	}
	return res, removeTrial(r.stateDir)
}

// revertConverge reconciles towards the before-images until a pass runs
// no operation (at most MaxPasses+1 passes). Each pass reads the kernel
// back and takes the intended value of every item the trial did not touch
// from that same read-back, so the revert never writes them: what the
// kernel derives by itself (a bridge's MTU from its ports) follows the
// journaled items as it did before the trial.
//
// NICs the trial renamed get their names back around the passes (see
// renamedByTrial): first those a kill left at a temporary name; then the
// passes revert every item but those NICs' interfaces, under the names the
// trial gave (the journal's); then the renamed NICs get their names back,
// and the passes revert the rest.
func (r *Runtime) revertConverge(ctx context.Context, hint *dg.Graph, images []BeforeImage) (*Result, error) {
	hint, err := r.revertHint(hint, images)
	if err != nil {
		return nil, err
	}
	renamed, keep, err := r.renamedByTrial(hint, images)
	if err != nil {
		return nil, err
	}
	var ops reconciler.OperationLog
	if len(renamed) > 0 {
		res, err := r.revertPasses(ctx, hint, withoutImagesOf(images, renamed))
		if err != nil || !res.Converged() {
			return res, err
		}
		ops = res.Ops
		if err := r.giveBackRenamed(keep, renamed); err != nil {
			return nil, err
		}
	}
	res, err := r.revertPasses(ctx, hint, images)
	if res != nil {
		res.Ops = append(ops, res.Ops...)
	}
	return res, err
}

// revertPasses is revertConverge's passes towards images.
func (r *Runtime) revertPasses(ctx context.Context, hint *dg.Graph, images []BeforeImage) (*Result, error) {
	var ops reconciler.OperationLog
	for pass := 1; ; pass++ {
		cur, err := r.ReadCurrent(hint)
		if err != nil {
			return nil, err
		}
		res := applyPass(ctx, r.Kernel(), cur, RevertIntended(cur, images))
		n := len(res.Ops)
		ops = append(ops, res.Ops...)
		res.Ops = ops
		if n == 0 || !res.Converged() || ctx.Err() != nil || pass > MaxPasses {
			return res, nil
		}
	}
}

// renamedByTrial lists the physical interfaces whose before-image
// declares them by name and that the trial found by a match instead (the
// read-back has the match, hint-shaped): the NIC that has the name now may
// not be the one the image is of (the trial swapped two NICs' names: each
// image is of the other NIC), and the passes could not tell them apart.
// keep is the other physical interfaces of the images. NICs a kill left at
// a temporary name are given back first (link.GiveBackRenamed).
func (r *Runtime) renamedByTrial(hint *dg.Graph, images []BeforeImage) (renamed []string, keep *dg.Graph, err error) {
	if r.target == nil {
		return nil, nil, nil // a namespace over fakes: no NIC is renamed
	}
	keep = dg.New("kept")
	var byName []*items.Interface
	for _, im := range images {
		if nic, ok := im.Item.(*items.Interface); ok && !im.Absent && nic.Kind == items.KindPhysical {
			if nic.Match == nil {
				byName = append(byName, nic)
			} else {
				keep.Put(nic)
			}
		}
	}
	if err := r.giveBackRenamed(keep, nil); err != nil {
		return nil, nil, err
	}
	cur, err := r.ReadCurrent(hint)
	if err != nil {
		return nil, nil, err
	}
	for _, nic := range byName {
		if now, ok := cur.Get(dg.Ref(nic)); ok && now.(*items.Interface).Match != nil {
			renamed = append(renamed, nic.IfName)
		} else {
			keep.Put(nic)
		}
	}
	return renamed, keep, nil
}

// withoutImagesOf is images without those of the interfaces names.
func withoutImagesOf(images []BeforeImage, names []string) []BeforeImage {
	return slices.DeleteFunc(slices.Clone(images), func(im BeforeImage) bool {
		return im.Ref.Type == items.TypeInterface && slices.Contains(names, im.Ref.Name)
	})
}

// giveBackRenamed gives the NICs now called one of names, and those at a
// temporary name, their names back (link.GiveBackRenamed; keep: the
// physical interfaces that stay).
func (r *Runtime) giveBackRenamed(keep *dg.Graph, names []string) error {
	given, err := link.GiveBackRenamed(r.target, r.stateDir, keep, names)
	if err != nil {
		return fmt.Errorf("reverting the renames of the trial: %w", err)
	}
	if len(given) > 0 {
		r.log.WithField("nics", given).Info("the revert gave NICs the trial renamed their names back")
	}
	return nil
}

// revertHint is the read-back hint of a revert: the trial's intent with
// each journaled item replaced by its before-image, so that the revert
// reads back what it compares exactly as the images spell it; an item
// the trial created (absent before it) is left out of the hint, so that
// a link the trial added and had not marked yet (killed between the add
// and the mark: only the create journal, links.json, names it) reads back
// as netagent's and is deleted, where a declared one would read back as
// someone else's link for a create to adopt. A NIC stays declared
// physical: it is never taken for netagent's. Added are the NICs that
// before-images need (an address on an uplink the trial's intent no
// longer names) and that the read-back does not report without a hint,
// declared as physical with every setting left as it is.
func (r *Runtime) revertHint(hint *dg.Graph, images []BeforeImage) (*dg.Graph, error) {
	if hint == nil {
		hint = dg.New("hint")
	} else {
		hint = hint.Root().Clone()
	}
	for _, im := range images {
		if !im.Absent {
			hint.Put(im.Item)
			continue
		}
		if it, ok := hint.Get(im.Ref); ok {
			if nic, ok := it.(*items.Interface); !ok || nic.Kind != items.KindPhysical {
				hint.Delete(im.Ref)
			}
		}
	}
	cur, err := r.ReadCurrent(hint)
	if err != nil {
		return nil, err
	}
	imaged := make(map[dg.ItemRef]bool, len(images))
	for _, im := range images {
		imaged[im.Ref] = !im.Absent
	}
	var missing []string
	for _, im := range images {
		if im.Absent {
			continue
		}
		for _, d := range im.Item.Dependencies() {
			ref := d.RequiredItem
			if ref.Type == items.TypeInterface && !imaged[ref] && !cur.Contains(ref) && !slices.Contains(missing, ref.Name) {
				missing = append(missing, ref.Name)
			}
		}
	}
	for _, name := range missing {
		hint.Put(&items.Interface{IfName: name, Kind: items.KindPhysical, AdminUp: true})
	}
	return hint, nil
}

// RevertIntended is the intended state of a revert: the owned items of cur
// as they are, with each journaled item replaced by its before-image
// (removed where it was absent). An item kept as it is that depends on
// one removed (or on such an item, in turn) is removed too: it could not
// exist before the trial, whose journal does not have it because the
// trial was killed before it reached it (the ethtool settings of a NIC
// the trial renamed, read back under the new name, and never changed).
func RevertIntended(cur *dg.Graph, images []BeforeImage) *dg.Graph {
	g := dg.New("revert")
	for it := range cur.Items() {
		if !it.External() {
			g.Put(it)
		}
	}
	removed := map[dg.ItemRef]bool{}
	journaled := make(map[dg.ItemRef]bool, len(images))
	for _, im := range images {
		journaled[im.Ref] = true
		if im.Absent {
			g.Delete(im.Ref)
			removed[im.Ref] = true
		} else {
			g.Put(im.Item)
		}
	}
	dropOrphans(g, journaled, removed)
	return g
}

// dropOrphans removes from g, until none is left, the items that are not
// journaled and depend on a removed one (removed grows with them).
func dropOrphans(g *dg.Graph, journaled, removed map[dg.ItemRef]bool) {
	for len(removed) > 0 {
		var orphans []dg.ItemRef
		for it := range g.Unordered() {
			ref := dg.Ref(it)
			if !journaled[ref] && slices.ContainsFunc(it.Dependencies(), func(d dg.Dependency) bool { return removed[d.RequiredItem] }) {
				orphans = append(orphans, ref)
			}
		}
		if len(orphans) == 0 {
			return
		}
		for _, ref := range orphans {
			g.Delete(ref)
			removed[ref] = true
		}
	}
}

// removeTrial removes a trial's record (durably: the trial is no longer
// pending), then its journal and requests.
func removeTrial(stateDir string) error {
	dir := filepath.Join(stateDir, TrialDir)
	if err := os.Remove(filepath.Join(dir, trialName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the trial record: %w", err)
	}
	if err := statefile.SyncDir(dir); err != nil {
		return fmt.Errorf("removing the trial record: %w", err)
	}
	for _, n := range []string{journalName, countPath(journalName), confirmName, revertName} {
		os.Remove(filepath.Join(dir, n))
	}
	return nil
}

// RequestConfirm asks the process that runs the target's trial to confirm
// it; RequestRevert, to revert it now. The process watches the trial
// directory (WatchRequests).
func RequestConfirm(stateDir string) error { return request(stateDir, confirmName) }

// RequestRevert: see RequestConfirm.
func RequestRevert(stateDir string) error { return request(stateDir, revertName) }

func request(stateDir, name string) error {
	t, err := PendingTrial(stateDir)
	if err != nil {
		return err
	}
	if t == nil {
		return ErrNoTrial
	}
	return statefile.WriteAtomic(trialPath(stateDir, name), []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n"))
}

// AwaitAnswer waits, until ctx ends, for the process running the trial t
// to act on a request (RequestConfirm, RequestRevert) made at since, and
// returns how the trial ended: confirmed or reverted (the trial is no
// longer pending), or OutcomeRevertIncomplete (its revert could not start
// and the trial stays pending; the process gives up on it and ends). A
// process that ends without an outcome for the request (its revert did
// not converge, it was killed) is an *AbandonedTrialError at once when
// the trial stays pending, and an error when it is gone without one:
// never a wait until ctx ends.
func AwaitAnswer(ctx context.Context, stateDir string, t Trial, since time.Time) (*Outcome, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if o, done, err := answer(stateDir, t, since); done {
			return o, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the trial's process (pid %d) did not answer: %w", t.PID, ctx.Err())
		case <-tick.C:
		}
	}
}

// answer looks once for AwaitAnswer: done when the trial t ended, its
// revert is incomplete, or its process is gone.
func answer(stateDir string, t Trial, since time.Time) (o *Outcome, done bool, err error) {
	// The process is looked at first: one gone before the outcome was
	// read left it (or none) behind.
	h, herr := HolderOf(stateDir)
	o, oerr := LastOutcome(stateDir)
	if oerr == nil && o != nil && (o.PID != t.PID || o.At.Before(since)) {
		o = nil // an earlier trial's, or this one's from before the request
	}
	p, perr := PendingTrial(stateDir)
	pending := perr == nil && p != nil && p.PID == t.PID && p.Started.Equal(t.Started)
	switch {
	case o != nil && o.Result == OutcomeRevertIncomplete:
		return o, true, nil
	case perr == nil && !pending && o != nil:
		return o, true, nil
	case perr == nil && !pending:
		if oerr != nil {
			return nil, true, fmt.Errorf("the trial of pid %d ended; its outcome is unknown: %w", t.PID, oerr)
		}
		return nil, true, fmt.Errorf("the trial of pid %d ended; its outcome is unknown", t.PID)
	case herr == nil && (h == nil || h.PID != t.PID) && pending:
		return nil, true, &AbandonedTrialError{Trial: t}
	}
	return nil, false, nil
}

// Outcome is how the target's last trial ended: <state dir>/trial/last.json,
// written before the trial's record is removed, for `netagent confirm`
// and status to report; or, RevertIncomplete, why its revert could not
// start (the trial stays pending).
type Outcome struct {
	PID int `json:"pid"`
	// Result is "confirmed", "reverted" or OutcomeRevertIncomplete.
	Result string    `json:"result"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

const outcomeName = "last.json"

// OutcomeRevertIncomplete is the Result of a revert that did not start
// (RevertIncompleteError).
const OutcomeRevertIncomplete = "RevertIncomplete"

// RecordOutcome writes the outcome of the target's last trial.
func RecordOutcome(stateDir string, o Outcome) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return statefile.SaveRecord(trialPath(stateDir, outcomeName), data, false)
}

// LastOutcome reads the outcome of the target's last trial; nil when none
// was recorded.
func LastOutcome(stateDir string) (*Outcome, error) {
	data, err := statefile.LoadRecord(trialPath(stateDir, outcomeName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var o Outcome
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("reading %s: %w", trialPath(stateDir, outcomeName), err)
	}
	return &o, nil
}

// DiscardTrial removes the pending trial of a target whose namespace is
// gone (the kernel state it changed went with it), recording why.
func DiscardTrial(stateDir, reason string) error {
	t, err := PendingTrial(stateDir)
	if err != nil || t == nil {
		return err
	}
	if err := RecordOutcome(stateDir, Outcome{PID: t.PID, Result: "reverted", Reason: reason, At: time.Now()}); err != nil {
		return err
	}
	return removeTrial(stateDir)
}
