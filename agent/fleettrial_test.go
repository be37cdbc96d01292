package agent

import (
	"testing"

	"github.com/netagent/netagent/agent/member"
)

// A fleet trial without a timeout lasts as long as a socket API trial
// without one: package member states the default for its envelopes.
func TestFleetTrialDefaultTimeout(t *testing.T) {
	if member.DefaultTrialTimeout != DefaultTrialTimeout {
		t.Errorf("member.DefaultTrialTimeout %v, DefaultTrialTimeout %v", member.DefaultTrialTimeout, DefaultTrialTimeout)
	}
}
