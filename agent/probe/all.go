package probe

import (
	"context"
	"errors"
	"sync"

	"github.com/netagent/netagent/internal/netnsx"
)

// All runs the probes concurrently inside tgt's namespace and returns nil
// when every one passes, or the failures joined in the order given.
func All(ctx context.Context, tgt *netnsx.Target, probes []Probe) error {
	errs := make([]error, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() { errs[i] = p.Run(ctx, tgt) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
