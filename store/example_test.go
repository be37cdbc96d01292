package store_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/local"
)

// A read-modify-write loop with compare-and-swap, and a watch that
// starts with the current documents.
func Example() {
	dir, _ := os.MkdirTemp("", "store-example-")
	defer os.RemoveAll(dir)
	s, err := local.Open(dir, local.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	v, _ := s.WriteCAS(ctx, "/netagent/hosts/edge-1/base.json", []byte(`{"interfaces":[]}`), store.NoVersion)
	_, err = s.WriteCAS(ctx, "/netagent/hosts/edge-1/base.json", []byte(`{}`), store.NoVersion)
	fmt.Println("create again:", errors.Is(err, store.ErrCASFailed))
	_, err = s.WriteCAS(ctx, "/netagent/hosts/edge-1/base.json", []byte(`{"interfaces":[{"name":"eth0"}]}`), v)
	fmt.Println("replace the version read:", err)

	w, _ := s.Watch(ctx, "/netagent/hosts/edge-1", store.NoVersion)
	for ev := range w.C {
		if ev.Type == store.Synced {
			fmt.Println("synced: the current documents are all delivered")
			break
		}
		fmt.Println(ev.Type, ev.Entry.Key, string(ev.Entry.Value))
	}
	// Output:
	// create again: true
	// replace the version read: <nil>
	// put /netagent/hosts/edge-1/base.json {"interfaces":[{"name":"eth0"}]}
	// synced: the current documents are all delivered
}
