package configurators

import (
	"fmt"

	"github.com/netagent/netagent/configurators/nftables"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
)

// Warning is something plan says of an intended item that is no failure:
// the apply runs, but the result may not be what the intent means.
type Warning struct {
	Ref  dg.ItemRef
	Text string
}

// PlanWarnings returns plan's warnings for intended in namespace t:
// today the other owners' nftables base chains that may drop what
// netagent's tables accept (nftables.Warnings). It reads only.
func PlanWarnings(t *netnsx.Target, intended *dg.Graph) ([]Warning, error) {
	return planWarnings(nftables.Warnings(t, intended))
}

// PlanWarnings is PlanWarnings over the fakes (their nftables tables,
// netagent's and others').
func (f *Fake) PlanWarnings(intended *dg.Graph) ([]Warning, error) {
	return planWarnings(f.Nft.Warnings(intended))
}

func planWarnings(ws []nftables.Warning, err error) ([]Warning, error) {
	if err != nil {
		return nil, fmt.Errorf("looking for other owners' nftables drops: %w", err)
	}
	out := make([]Warning, 0, len(ws))
	for _, w := range ws {
		out = append(out, Warning{Ref: w.Ref, Text: w.Text})
	}
	return out, nil
}
