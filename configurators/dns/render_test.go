package dns

import (
	"bytes"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/items"
)

// lineGrammar is every line the agent may write after its header.
var lineGrammar = regexp.MustCompile(`^(nameserver [\x21\x22\x24-\x3a\x3c-\x7e]+|search [0-9A-Za-z.-]+( [0-9A-Za-z.-]+)*)$`)

// checkGrammar fails unless data is the header and lines of lineGrammar,
// within the file's bounds, with no more than want lines after the
// header.
func checkGrammar(t *testing.T, data []byte, want int) {
	t.Helper()
	if len(data) > MaxBytes {
		t.Fatalf("%d bytes, more than %d:\n%s", len(data), MaxBytes, data)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if lines[0] != Header || len(lines) > MaxLines || len(lines)-1 > want {
		t.Fatalf("%d lines (want the header and at most %d):\n%s", len(lines), want, data)
	}
	for _, l := range lines[1:] {
		if !lineGrammar.MatchString(l) {
			t.Fatalf("line %q is not in resolv.conf's grammar:\n%s", l, data)
		}
	}
}

// Whatever reaches Render, nothing from a lease writes a line of its
// own: the search domain with a newline of issue 22 (the server's
// "nameserver 6.6.6.6" and "options ndots:15 trust-ad"), a zone with one,
// multicast or unspecified servers, and more than the bounds are left
// out (ErrUnsafe naming each); the rest is written.
func TestRenderRefusesInjection(t *testing.T) {
	ll := netip.MustParseAddr("fe80::1")
	d := &items.DNS{Path: "/x",
		Nameservers: []netip.Addr{netip.MustParseAddr("0.0.0.0"), netip.MustParseAddr("224.0.0.251"), ll.WithZone("eth0\nnameserver 6.6.6.6"),
			netip.MustParseAddr("192.0.2.53"), ll.WithZone("up0"), netip.MustParseAddr("2001:db8::53"), netip.MustParseAddr("192.0.2.54")},
		Search: []string{"a.example\nnameserver 6.6.6.6\noptions ndots:15 trust-ad", "corp.example", "b c", "x#y",
			"d1.example", "d2.example", "d3.example", "d4.example", "d5.example", "d6.example"}}
	data, err := Render(d)
	want := Header + "\nnameserver 192.0.2.53\nnameserver fe80::1%up0\nnameserver 2001:db8::53\n" +
		"search corp.example d1.example d2.example d3.example d4.example d5.example\n"
	if string(data) != want {
		t.Errorf("rendered\n%s\nwant\n%s", data, want)
	}
	checkGrammar(t, data, 4)
	if !errors.Is(err, ErrUnsafe) {
		t.Fatalf("error %v, want ErrUnsafe", err)
	}
	for _, s := range []string{`"0.0.0.0"`, `"224.0.0.251"`, `nameserver 6.6.6.6`, "192.0.2.54: more than 3", `"b c"`, `"x#y"`, "d6.example: beyond"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
	long := strings.Repeat("a", 60) + ".example" // 68 characters
	data, err = Render(&items.DNS{Search: []string{long + "1", long + "2", long + "3", long + "4"}})
	checkGrammar(t, data, 1)
	if !strings.Contains(string(data), long+"3\n") || !errors.Is(err, ErrUnsafe) {
		t.Errorf("256 characters: rendered\n%s\n%v", data, err)
	}
}

// The file read back is opened without following a symlink or blocking
// on a FIFO, and bounded: each is someone else's.
func TestReadOursRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	ours := filepath.Join(dir, "ours")
	os.WriteFile(ours, []byte(Header+"\n"), 0o644)
	os.Symlink(ours, link)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, append([]byte(Header+"\n"), bytes.Repeat([]byte("# pad\n"), readLimit)...), 0o644)
	for _, p := range []string{fifo, link, big} {
		done := make(chan error, 1)
		go func() { _, err := readOurs(p); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrForeign) {
				t.Errorf("%s: %v, want ErrForeign", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: readOurs blocked", p)
		}
	}
	if data, err := readOurs(ours); err != nil || string(data) != Header+"\n" {
		t.Errorf("our own file: %q, %v", data, err)
	}
}

// FuzzRender: whatever the servers' zones and the domains hold, the file
// is the header and lines of its grammar, within its bounds, one line per
// server and one for the search list at most.
func FuzzRender(f *testing.F) {
	f.Add("up0", "a.example\nnameserver 6.6.6.6", "b.example", "c.example")
	f.Add("eth0\n", "x\r\ny", "", strings.Repeat("a.", 200))
	f.Add("", "a b", "#", ";")
	f.Fuzz(func(t *testing.T, zone, d1, d2, d3 string) {
		d := &items.DNS{Nameservers: []netip.Addr{netip.MustParseAddr("fe80::1").WithZone(zone), netip.MustParseAddr("192.0.2.1"),
			netip.MustParseAddr("2001:db8::1").WithZone(zone), netip.MustParseAddr("192.0.2.2")},
			Search: []string{d1, d2, d3, d1 + "." + d2}}
		data, _ := Render(d)
		checkGrammar(t, data, items.MaxNameservers+1)
	})
}
