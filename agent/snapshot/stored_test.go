package snapshot

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/local"
)

func gz(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// A stored snapshot reads back as written; what is not a stored snapshot
// (not gzip, a version 1 document, an unpacked size over the bound, a
// bad host name, no key) is refused saying why.
func TestStoredRoundTripAndRefusals(t *testing.T) {
	ctx := context.Background()
	st, err := local.Open(t.TempDir(), local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l := fleet.Layout{Prefix: "/p"}
	raw, err := minimal().EncodeStored()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteCAS(ctx, l.Snapshot("h1"), raw, store.NoVersion); err != nil {
		t.Fatal(err)
	}
	d, v, err := ReadStored(ctx, st, l, "h1")
	if err != nil || v == 0 || d.Netns != "n1" || len(d.Nftables.Tables) != 2 {
		t.Fatalf("read back: %v %v %+v", v, err, d)
	}
	old := minimal()
	old.Version = 1
	for name, c := range map[string]struct {
		value []byte
		want  string
	}{
		"plain JSON": {encode(t, minimal()), "not gzip"},
		"version 1":  {gz(encode(t, old)), "version 1 is not supported"},
		"a bomb":     {gz(bytes.Repeat([]byte(" "), MaxStoredJSON+1)), "larger than"},
		"two":        {gz(append(encode(t, minimal()), encode(t, minimal())...)), "more than one"},
	} {
		if _, err := st.WriteCAS(ctx, l.Snapshot("bad"), c.value, store.NoVersion); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadStored(ctx, st, l, "bad"); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "/p/snapshots/bad") {
			t.Errorf("%s: %v", name, err)
		}
		e, _ := st.Read(ctx, l.Snapshot("bad"))
		st.DeleteCAS(ctx, l.Snapshot("bad"), e.Version)
	}
	if _, _, err := ReadStored(ctx, st, l, "none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("no snapshot: %v", err)
	}
	if _, _, err := ReadStored(ctx, st, l, "a/b"); !errors.Is(err, fleet.ErrInvalidName) {
		t.Errorf("host a/b: %v", err)
	}
	if _, err := DecodeStored(make([]byte, MaxStored+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
}

// A document too large for the store is not encoded: ErrTooLarge, with
// the sizes.
func TestEncodeStoredTooLarge(t *testing.T) {
	d := minimal()
	big := make([]byte, 2*MaxStored)
	rand.NewChaCha8([32]byte{1}).Read(big) // does not compress
	d.Records = append(d.Records, Record{Path: "big", Content: big})
	if _, err := d.EncodeStored(); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "the limit is 1500000") {
		t.Errorf("got %v", err)
	}
}
