package agent

import (
	"encoding/json"
	"testing"
	"testing/synctest"

	"github.com/netagent/netagent/agent/api"
)

// TestAPIPlanSaysWhatItDoesToTraffic: the daemon's plan gives each
// operation what it does to traffic: a new route none, a gateway change a
// replace (atomic), a route no longer intended removed.
func TestAPIPlanSaysWhatItDoesToTraffic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, map[string]string{"10-uplink.json": uplinkDoc}).start()
		resp := r.call(api.Request{Command: api.CmdPlan, Intent: json.RawMessage(twoRoutesDoc)})
		for _, op := range resp.Operations {
			if op.Disruption == nil || op.Disruption.Effect != "none" {
				t.Errorf("plan: %s %s: disruption %+v, want none", op.Op, op.Item, op.Disruption)
			}
		}
		if resp := r.call(api.Request{Command: api.CmdApply, Intent: json.RawMessage(twoRoutesDoc)}); resp.Error != "" {
			t.Fatalf("apply: %+v", resp)
		}
		changed := `{"version": 1, "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.3", "dev": "uplink0"}]}`
		resp = r.call(api.Request{Command: api.CmdPlan, Intent: json.RawMessage(changed)})
		want := map[string]string{
			"modify " + routeRef.String():  "atomic",
			"delete " + route2Ref.String(): "removed",
		}
		got := map[string]string{}
		for _, op := range resp.Operations {
			if op.Disruption != nil {
				got[op.Op+" "+op.Item] = op.Disruption.Effect
			}
		}
		for op, eff := range want {
			if got[op] != eff {
				t.Errorf("plan: %s: effect %q, want %q (all: %v)", op, got[op], eff, got)
			}
		}
	})
}
