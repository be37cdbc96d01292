package firewall

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestQuoteArg(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ACCEPT", "ACCEPT"},
		{"192.168.50.0/24", "192.168.50.0/24"},
		{"RELATED,ESTABLISHED", "RELATED,ESTABLISHED"},
		{"!", "!"},
		{"", `""`},
		{"two words", `"two words"`},
		{`say "hi"`, `"say \"hi\""`},
		{`back\slash`, `"back\\slash"`},
		{"it's", `"it's"`},
		{"#hash", `"#hash"`},
		{"tab\there", "\"tab\there\""},
	} {
		got, err := quoteArg(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("quoteArg(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"a\nb", "a\rb", "a\x00b"} {
		if _, err := quoteArg(bad); !errors.Is(err, ErrBadArgument) {
			t.Errorf("quoteArg(%q) err = %v, want ErrBadArgument", bad, err)
		}
	}
}

func TestSplitLineReadsIptablesOutput(t *testing.T) {
	// As iptables -S prints them (xtables_save_string escapes " \ and ').
	line := `-A NA -s 10.0.0.2/32 -p tcp -m comment --comment "a \"q\" it\'s" -m tcp --dport 22 -j ACCEPT`
	got, err := splitLine(line)
	want := []string{"-A", "NA", "-s", "10.0.0.2/32", "-p", "tcp", "-m", "comment", "--comment", `a "q" it's`,
		"-m", "tcp", "--dport", "22", "-j", "ACCEPT"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("splitLine = %q, %v\nwant %q", got, err, want)
	}
	if _, err := splitLine(`-A X "open`); err == nil {
		t.Error("unterminated quote accepted")
	}
}

// FuzzQuoteRoundTrip: whatever quoteArg accepts, splitLine reads back as
// one identical argument.
func FuzzQuoteRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a b", `"`, `\`, `\"`, "x\ty", "ACCEPT", `"\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		line, err := ruleLine("-A", "C", []string{arg, "-j", "X"})
		if err != nil {
			if !strings.ContainsAny(arg, "\n\r\x00") {
				t.Fatalf("refused %q: %v", arg, err)
			}
			return
		}
		got, err := splitLine(line)
		if err != nil || !slices.Equal(got, []string{"-A", "C", arg, "-j", "X"}) {
			t.Fatalf("%q -> %q -> %q, %v", arg, line, got, err)
		}
	})
}

// recordingRunner records the argument vectors it is asked to run.
type recordingRunner struct {
	calls  [][]string
	stdins []string
	out    []byte
}

func (r *recordingRunner) run(_ context.Context, stdin []byte, argv ...string) ([]byte, error) {
	r.calls = append(r.calls, argv)
	r.stdins = append(r.stdins, string(stdin))
	return r.out, nil
}

func TestExecBackendArgv(t *testing.T) {
	r := &recordingRunner{out: []byte("*nat\n:POSTROUTING ACCEPT [0:0]\n:X - [0:0]\n-A X -m comment --comment netagent\nCOMMIT\n")}
	b := &execBackend{run: r, saveCmd: "/usr/sbin/iptables-save", restoreCmd: "/usr/sbin/iptables-restore"}
	if err := b.restore(context.Background(), []byte("*nat\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	tables, err := b.save(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !ownedRules(tables["nat"].chains["X"]) {
		t.Errorf("save parsed as %+v", tables["nat"])
	}
	want := [][]string{{"/usr/sbin/iptables-restore", "--noflush", "--wait"}, {"/usr/sbin/iptables-save"}}
	if !slices.EqualFunc(r.calls, want, slices.Equal) || r.stdins[0] != "*nat\nCOMMIT\n" {
		t.Errorf("calls = %q, stdins = %q", r.calls, r.stdins)
	}
}
