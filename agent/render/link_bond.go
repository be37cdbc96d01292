package render

import (
	"slices"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// bondKind: the intent's names are the kernel's; a bond without a section
// has none (all defaults). Read back, the options that the mode ignores
// are left out.
var bondKind = linkKind{
	toItem: func(ifc *intent.Interface) items.KindAttrs {
		b := ifc.Bond
		if b == nil {
			return nil
		}
		return &items.BondAttrs{
			Mode:           string(b.Mode),
			Miimon:         b.MIIMon.Units(),
			LacpRate:       string(b.LACPRate),
			XmitHashPolicy: string(b.XmitHashPolicy),
			MinLinks:       b.MinLinks,
			Primary:        b.Primary,
		}
	},
	toIntent: func(it *items.Interface, ifc *intent.Interface) {
		a := items.AttrsOf[*items.BondAttrs](it)
		if a == nil {
			return
		}
		b := &intent.Bond{Mode: intent.BondMode(a.Mode), MIIMon: intent.Milliseconds{Count: a.Miimon}}
		mode := b.EffectiveMode()
		if slices.Contains(intent.LACPRateModes, mode) {
			b.LACPRate = intent.LACPRate(a.LacpRate)
		}
		if slices.Contains(intent.XmitHashPolicyModes, mode) {
			b.XmitHashPolicy = intent.XmitHashPolicy(a.XmitHashPolicy)
		}
		if slices.Contains(intent.MinLinksModes, mode) {
			b.MinLinks = a.MinLinks
		}
		if slices.Contains(intent.PrimaryModes, mode) {
			b.Primary = a.Primary
		}
		ifc.Bond = b
	},
}
