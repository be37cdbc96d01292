package target

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// LogOp logs a successful operation at info level and a failed one at
// warning level, and nothing the logger's level leaves out.
func TestLogOpLevels(t *testing.T) {
	r := &items.Route{Dst: netip.MustParsePrefix("10.0.0.0/24"), Dev: "eth0"}
	ok := reconciler.OpLogEntry{Ref: dg.Ref(r), Item: r, Op: reconciler.OpCreate}
	failed := ok
	failed.Err = errors.New("refused")
	for _, c := range []struct {
		level      logrus.Level
		ok, failed bool
	}{
		{logrus.InfoLevel, true, true},
		{logrus.WarnLevel, false, true},
		{logrus.ErrorLevel, false, false},
	} {
		var out bytes.Buffer
		log := logrus.New()
		log.SetOutput(&out)
		log.SetLevel(c.level)
		hook := LogOp(log)
		hook(ok)
		if got := strings.Contains(out.String(), "outcome=ok"); got != c.ok {
			t.Errorf("level %v: success logged %v, want %v: %q", c.level, got, c.ok, out.String())
		}
		out.Reset()
		hook(failed)
		if got := strings.Contains(out.String(), "outcome=failed") && strings.Contains(out.String(), "refused"); got != c.failed {
			t.Errorf("level %v: failure logged %v, want %v: %q", c.level, got, c.failed, out.String())
		}
		// through an entry (a FieldLogger with fields), as the daemon passes it
		out.Reset()
		LogOp(log.WithField("target", "x"))(failed)
		if got := out.Len() > 0; got != c.failed {
			t.Errorf("level %v, entry: failure logged %v, want %v", c.level, got, c.failed)
		}
	}
}
