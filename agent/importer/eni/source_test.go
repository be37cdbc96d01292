package eni

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
)

// writeTree writes files (path relative to dir: contents) and returns dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func names(res *importer.Result) []string {
	var out []string
	for _, ifc := range res.Intent.Interfaces {
		out = append(out, ifc.Name)
	}
	return out
}

// refusalOf imports path and returns its one refusal's text.
func refusalOf(t *testing.T, path string) string {
	t.Helper()
	_, err := Import(path, importer.Options{})
	var ie *importer.Error
	if !errors.As(err, &ie) {
		t.Fatalf("%s: err %v, want a refusal", path, err)
	}
	return err.Error()
}

func TestSourceGlob(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"interfaces":         "auto eth0\niface eth0 inet dhcp\nsource " + "DIR/interfaces.d/*\n",
		"interfaces.d/b":     "auto eth2\niface eth2 inet manual\n",
		"interfaces.d/a.cf":  "auto eth1\niface eth1 inet manual\n",
		"interfaces.d/.hid":  "auto eth9\niface eth9 inet manual\n",
		"interfaces.d/sub/x": "auto eth8\niface eth8 inet manual\n",
	})
	top := filepath.Join(dir, "interfaces")
	data, _ := os.ReadFile(top)
	os.WriteFile(top, []byte(strings.ReplaceAll(string(data), "DIR", dir)), 0o644)
	res, err := Import(top, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(res), " "); got != "eth0 eth1 eth2" {
		t.Errorf("interfaces %q, want eth0 eth1 eth2 (a.cf, b in order; not .hid, not the directory sub)", got)
	}
}

func TestSourceRelativeToWorkingDirectory(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"etc/interfaces": "source parts/*\n",
		"parts/one":      "auto eth1\niface eth1 inet manual\n",
	})
	t.Chdir(dir)
	res, err := Import("etc/interfaces", importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(res), " "); got != "eth1" {
		t.Errorf("interfaces %q: a relative source is relative to the working directory, as ifupdown2's glob", got)
	}
}

func TestSourceRefusalsKeepTheirFile(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"interfaces": "source DIR/inc\n",
		"inc":        "auto eth0\niface eth0 inet static\n  post-up true\n",
	})
	top := filepath.Join(dir, "interfaces")
	os.WriteFile(top, []byte("source "+filepath.Join(dir, "inc")+"\n"), 0o644)
	if got, want := refusalOf(t, top), filepath.Join(dir, "inc")+":3:3: iface eth0: post-up: "; !strings.HasPrefix(got, want) {
		t.Errorf("refusal %q, want it at the sourced file's line: %q", got, want)
	}
}

func TestSourceMissingAndBad(t *testing.T) {
	dir := writeTree(t, map[string]string{"interfaces": ""})
	top := filepath.Join(dir, "interfaces")
	for src, want := range map[string]string{
		"source " + dir + "/none\n":        ":1:8: source: cannot find source file",
		"source " + dir + "/none.d/*\n":    "", // a '*' that matches nothing: nothing to read
		"source " + dir + "/[\n":           ":1:8: source: bad pattern",
		"source a b\n":                     ":1:1: source: want source PATH",
		"source-directory " + dir + "/x\n": ":1:18: source-directory: reading ",
	} {
		os.WriteFile(top, []byte(src), 0o644)
		_, err := Import(top, importer.Options{})
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", src, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: err %v, want %q", src, err, want)
		}
	}
}

func TestSourceLoopRefused(t *testing.T) {
	dir := writeTree(t, map[string]string{"a": "", "b": ""})
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("auto eth0\niface eth0 inet dhcp\nsource "+b+"\n"), 0o644)
	os.WriteFile(b, []byte("source "+a+"\n"), 0o644)
	if got, want := refusalOf(t, a), b+":1:8: source: a loop of sources: "+a+" is already being read"; !strings.HasPrefix(got, want) {
		t.Errorf("refusal %q, want %q", got, want)
	}
}

func TestSourceBounds(t *testing.T) {
	dir := t.TempDir()
	// A chain deeper than MaxSourceDepth: f0 sources f1 sources f2 ...
	for i := range MaxSourceDepth + 2 {
		next := filepath.Join(dir, "f"+string(rune('a'+i+1)))
		os.WriteFile(filepath.Join(dir, "f"+string(rune('a'+i))), []byte("source "+next+"\n"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "f"+string(rune('a'+MaxSourceDepth+2))), nil, 0o644)
	if got := refusalOf(t, filepath.Join(dir, "fa")); !strings.Contains(got, "sources nest deeper than 8 files") {
		t.Errorf("deep chain: %q", got)
	}
	// More files than MaxSourceFiles: one file sourced by a glob many times over.
	many := writeTree(t, map[string]string{"leaf": "\n"})
	var b strings.Builder
	for range MaxSourceFiles + 1 {
		b.WriteString("source " + filepath.Join(many, "leaf") + "\n")
	}
	os.WriteFile(filepath.Join(many, "top"), []byte(b.String()), 0o644)
	if got := refusalOf(t, filepath.Join(many, "top")); !strings.Contains(got, "more than 256 files sourced") {
		t.Errorf("many files: %q", got)
	}
	// A sourced file larger than importer.MaxFileSize.
	big := writeTree(t, map[string]string{"big": strings.Repeat("#\n", importer.MaxFileSize/2+1)})
	os.WriteFile(filepath.Join(big, "top"), []byte("source "+filepath.Join(big, "big")+"\n"), 0o644)
	if got := refusalOf(t, filepath.Join(big, "top")); !strings.Contains(got, "larger than allowed") {
		t.Errorf("big file: %q", got)
	}
}

func TestSourceDirectory(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"interfaces":         "source-directory interfaces.d\n",
		"interfaces.d/10-b":  "auto eth2\niface eth2 inet manual\n",
		"interfaces.d/05_a":  "auto eth1\niface eth1 inet manual\n",
		"interfaces.d/x.cfg": "auto eth9\niface eth9 inet manual\n",
		"interfaces.d/sub/y": "auto eth8\niface eth8 inet manual\n",
	})
	t.Chdir(t.TempDir()) // relative to the file's directory, not the working one
	res, err := Import(filepath.Join(dir, "interfaces"), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(res), " "); got != "eth1 eth2" {
		t.Errorf("interfaces %q, want eth1 eth2 (run-parts names in order; not x.cfg, not sub)", got)
	}
}

func TestSourceEndsTheStanza(t *testing.T) {
	dir := writeTree(t, map[string]string{"inc": "\n"})
	src := "auto eth0\niface eth0 inet dhcp\nsource " + filepath.Join(dir, "inc") + "\n  mtu 1400\n"
	os.WriteFile(filepath.Join(dir, "top"), []byte(src), 0o644)
	if got := refusalOf(t, filepath.Join(dir, "top")); !strings.Contains(got, ":4:3: mtu: an option outside any iface stanza") {
		t.Errorf("refusal %q", got)
	}
}
