package agent

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestRenamedFileSkipsTheQuietPeriod: a file renamed into place is
// complete, so the loop applies it after the settle window, not after the
// quiet period that an in-place write needs.
func TestRenamedFileSkipsTheQuietPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.k.takeOps()
		r.src.setRenamed("20-routes.json", twoRoutesDoc)
		time.Sleep(DefaultIntentSettle + time.Millisecond)
		synctest.Wait()
		if ops := r.k.takeOps(); !slices.Equal(ops, []string{"create " + route2Ref.String()}) {
			t.Errorf("ops %v after the settle window, want the new route", ops)
		}
	})
}

// TestInPlaceWriteKeepsTheQuietPeriod: a burst with an in-place write
// waits for the quiet period even when a renamed file joins it, so a half
// written file is not read early.
func TestInPlaceWriteKeepsTheQuietPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		r.k.takeOps()
		runs := r.k.reconciles()
		r.src.set("20-routes.json", twoRoutesDoc)
		synctest.Wait()
		r.src.setRenamed("30-other.json", `{}`)
		time.Sleep(DefaultIntentDebounce / 2)
		synctest.Wait()
		if r.k.reconciles() != runs {
			t.Fatal("reconciled inside the quiet period of an in-place write")
		}
		time.Sleep(DefaultIntentDebounce)
		synctest.Wait()
		if !r.k.has(route2Ref) {
			t.Error("the burst was not applied after the quiet period")
		}
	})
}

// TestSettleGathersFilesWrittenInARow: a tool renaming several files into
// place one after another, each within the settle window of the last, is
// one burst: one load, one reconcile.
func TestSettleGathersFilesWrittenInARow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		loads, runs := r.src.loadCount(), r.k.reconciles()
		for i := range 5 {
			doc := routeDoc
			if i%2 == 0 {
				doc = twoRoutesDoc
			}
			r.src.setRenamed("20-routes.json", doc)
			synctest.Wait()
			time.Sleep(DefaultIntentSettle / 2)
		}
		synctest.Wait()
		if r.k.reconciles() != runs {
			t.Fatal("reconciled inside the settle window")
		}
		time.Sleep(DefaultIntentSettle)
		synctest.Wait()
		if got := r.src.loadCount() - loads; got != 1 {
			t.Errorf("%d loads for the files written in a row, want 1", got)
		}
		if got := r.k.reconciles() - runs; got != 1 {
			t.Errorf("%d reconciles, want 1", got)
		}
		if !r.k.has(route2Ref) {
			t.Error("the last version (two routes) is not what was applied")
		}
	})
}
