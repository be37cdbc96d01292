package intent

import (
	"strings"
	"testing"
)

// A good dns section validates and marshals back as it was.
func TestDNSSection(t *testing.T) {
	in := mustParse(t, doc(`"dns": {"nameservers": ["192.0.2.53", "2001:db8::53", "fe80::1%eth0"], "search": ["example.com", "lab.example.com."]}`))
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := in.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if want := `"dns":{"nameservers":["192.0.2.53","2001:db8::53","fe80::1%eth0"],"search":["example.com","lab.example.com."]}`; !strings.Contains(string(out), want) {
		t.Errorf("marshalled %s, want %s", out, want)
	}
}

// Bad name servers and search domains are errors naming their JSON path.
func TestDNSRejects(t *testing.T) {
	long := strings.Repeat("a", 60)
	for _, tc := range []struct {
		doc  string
		want []string
	}{
		{`"dns": {"nameservers": ["192.0.2.300", "0.0.0.0", "fe80::1", "192.0.2.1", "192.0.2.1"]}`, []string{
			"dns.nameservers: 5 name servers: resolv.conf readers use at most 3",
			`dns.nameservers[0]: "192.0.2.300" is not an IP address`,
			"dns.nameservers[1]: 0.0.0.0 is not a unicast address",
			"dns.nameservers[2]: fe80::1 is link-local: give its interface as a zone (fe80::1%eth0)",
			"dns.nameservers[4]: 192.0.2.1 is listed twice",
		}},
		{`"dns": {"search": ["exa mple.com", "-bad.com", "ok.com", "OK.com."]}`, []string{
			`dns.search[0]: "exa mple.com" is not a domain name (labels of letters, digits and '-', at most 253 bytes)`,
			`dns.search[1]: "-bad.com" is not a domain name (labels of letters, digits and '-', at most 253 bytes)`,
			`dns.search[3]: "OK.com." is listed twice`,
		}},
		{`"dns": {"search": ["a.com", "b.com", "c.com", "d.com", "e.com", "f.com", "g.com"]}`, []string{
			"dns.search: 7 search domains: resolv.conf readers use at most 6",
		}},
		{`"dns": {"search": ["` + long + `.one", "` + long + `.two", "` + long + `.three", "` + long + `.four"]}`, []string{
			"dns.search: the search list is 262 characters long: resolv.conf readers use at most 256",
		}},
	} {
		checkMessages(t, mustParse(t, doc(tc.doc)).Validate(), tc.want)
	}
}

// Two files with a dns section conflict: each is reported, nothing merged.
func TestDNSMergeOneFile(t *testing.T) {
	a := mustParse(t, doc(`"dns": {"nameservers": ["192.0.2.53"]}`))
	b := mustParse(t, doc(`"dns": {"search": ["example.com"]}`))
	in, err := Merge(map[string]*Intent{"b.json": b})
	if err != nil || in.DNS == nil || in.DNS.Origin.File != "b.json" {
		t.Fatalf("one file: %+v, %v", in, err)
	}
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	_, err = Merge(map[string]*Intent{"a.json": a, "b.json": b})
	checkMessages(t, err, []string{
		"a.json: dns: the dns section is also defined at dns in b.json",
		"b.json: dns: the dns section is also defined at dns in a.json",
	})
	// Errors in a merged file's dns name the file.
	bad := mustParse(t, doc(`"dns": {"nameservers": ["nope"]}`))
	in, err = Merge(map[string]*Intent{"a.json": bad})
	if err != nil {
		t.Fatal(err)
	}
	checkMessages(t, in.Validate(), []string{`a.json: dns.nameservers[0]: "nope" is not an IP address`})
}
