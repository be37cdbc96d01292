package intent

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestSplitRule(t *testing.T) {
	cases := []struct {
		rule string
		want []string
	}{
		{"-i br-lan -o uplink0 -j ACCEPT", []string{"-i", "br-lan", "-o", "uplink0", "-j", "ACCEPT"}},
		{"  -j\tACCEPT  ", []string{"-j", "ACCEPT"}},
		{"", nil},
		{"   ", nil},
		{`--comment "allow lan"`, []string{"--comment", "allow lan"}},
		{`--comment 'it''s'`, []string{"--comment", "its"}},
		{`--comment 'say "hi"'`, []string{"--comment", `say "hi"`}},
		{`--comment "say \"hi\" \\ \$HOME \x"`, []string{"--comment", `say "hi" \ $HOME \x`}},
		{`--comment "it's"`, []string{"--comment", "it's"}},
		{`--comment a\ b\"c\\`, []string{"--comment", `a b"c\`}},
		{`--comment ""`, []string{"--comment", ""}},
		{`--comment ''`, []string{"--comment", ""}},
		{`pre"mid dle"'post'`, []string{"premid dlepost"}},
		{`--comment 'no $expansion; ` + "`nor this`" + `'`, []string{"--comment", "no $expansion; `nor this`"}},
		{`--comment "naïve ✓"`, []string{"--comment", "naïve ✓"}},
	}
	for _, tc := range cases {
		got, err := SplitRule(tc.rule)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("SplitRule(%q) = %q, %v; want %q", tc.rule, got, err, tc.want)
		}
	}
}

func TestSplitRuleErrors(t *testing.T) {
	cases := []struct{ rule, want string }{
		{`--comment "allow lan`, "unbalanced double quote at column 11"},
		{`--comment 'allow lan`, "unbalanced single quote at column 11"},
		{`--comment "a\"`, "unbalanced double quote at column 11"},
		{`-j ACCEPT\`, "trailing backslash at column 10"},
		{"-j ACCEPT\n-A INPUT -j DROP", `control character '\n' at column 10`},
		{"-j ACCEPT\x00", `control character '\x00' at column 10`},
		{"-j \xff", "rule is not valid UTF-8"},
	}
	for _, tc := range cases {
		got, err := SplitRule(tc.rule)
		if err == nil || err.Error() != tc.want {
			t.Errorf("SplitRule(%q) = %q, %v; want error %q", tc.rule, got, err, tc.want)
		}
	}
}

// TestSplitPlainIsTheSplitter: the fast path takes exactly the plain
// rules, and splits them, or refuses them, as the general splitter does.
func TestSplitPlainIsTheSplitter(t *testing.T) {
	for _, rule := range []string{"-i br-lan -o uplink0 -j ACCEPT", "  -j\tACCEPT  ", "", "   ", "\t", "x",
		"-j ACCEPT\n-A INPUT -j DROP", "-j ACCEPT\x00", "a\x7fb", "-m comment --comment it's", `a\ b`, "naïve"} {
		checkSplitPlain(t, rule)
	}
}

// FuzzSplitPlain: the fast path agrees with the general splitter.
func FuzzSplitPlain(f *testing.F) {
	for _, s := range []string{"-j ACCEPT", " a  b\t", "", "\x01", "'", "é"} {
		f.Add(s)
	}
	f.Fuzz(checkSplitPlain)
}

func checkSplitPlain(t *testing.T, rule string) {
	args, ok, err := splitPlain(rule)
	plain := !strings.ContainsAny(rule, `'"\`) && !strings.ContainsFunc(rule, func(r rune) bool { return r >= 0x80 })
	if ok != plain {
		t.Fatalf("splitPlain(%q) took it: %v, want %v", rule, ok, plain)
	}
	if !ok {
		return
	}
	want, werr := splitGeneral(rule)
	if fmt.Sprint(err) != fmt.Sprint(werr) || !slices.Equal(args, want) || (args == nil) != (want == nil) {
		t.Fatalf("splitPlain(%q) = %q, %v; the splitter: %q, %v", rule, args, err, want, werr)
	}
}

// quoteArgs joins args into a rule that SplitRule splits back into them.
func quoteArgs(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

// FuzzSplitRule checks that SplitRule never panics, and that whatever it
// splits, quoted back into a rule, splits into the same arguments.
func FuzzSplitRule(f *testing.F) {
	for _, s := range []string{`-j ACCEPT`, `--comment "a \"b\""`, `'x'y"z"`, `a\ b`, `"`, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rule string) {
		args, err := SplitRule(rule)
		if err != nil {
			return
		}
		again, err := SplitRule(quoteArgs(args))
		if err != nil || !slices.Equal(again, args) {
			t.Fatalf("SplitRule(quoteArgs(%q)) = %q, %v", args, again, err)
		}
	})
}
