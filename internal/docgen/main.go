// Command docgen writes the generated documentation of the tree.
//
//	docgen intent -schema agent/intent/schema.json -page docs/intent.md
//	docgen man -date YYYY-MM-DD -source "netagent VERSION" -o DIR PAGE.md...
//
// intent rewrites the field reference of the page (between its markers)
// from the schema's descriptions (internal/schemadoc); `go generate
// ./agent/intent` runs it, and agent/intent's TestIntentDocIsCurrent fails
// when the page is stale. man converts each Markdown page whose first line
// is "# name(section)" into DIR/man<section>/name.<section>
// (internal/manpage); scripts/install.sh runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/netagent/netagent/internal/manpage"
	"github.com/netagent/netagent/internal/schemadoc"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: docgen intent|man [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "intent":
		err = intent(os.Args[2:])
	case "man":
		err = man(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (intent or man)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

func intent(args []string) error {
	fs := flag.NewFlagSet("intent", flag.ExitOnError)
	schemaPath := fs.String("schema", "agent/intent/schema.json", "the JSON Schema")
	pagePath := fs.String("page", "docs/intent.md", "the page to update")
	fs.Parse(args)
	schema, err := os.ReadFile(*schemaPath)
	if err != nil {
		return err
	}
	ref, err := schemadoc.Reference(schema)
	if err != nil {
		return fmt.Errorf("%s: %w", *schemaPath, err)
	}
	page, err := os.ReadFile(*pagePath)
	if err != nil {
		return err
	}
	out, err := schemadoc.Splice(page, ref)
	if err != nil {
		return fmt.Errorf("%s: %w", *pagePath, err)
	}
	return os.WriteFile(*pagePath, out, 0o644)
}

func man(args []string) error {
	fs := flag.NewFlagSet("man", flag.ExitOnError)
	var h manpage.Header
	fs.StringVar(&h.Date, "date", "", "the date of the .TH line (YYYY-MM-DD)")
	fs.StringVar(&h.Source, "source", "netagent", "the source of the .TH line: netagent and its version")
	fs.StringVar(&h.Manual, "manual", "netagent manual", "the manual of the .TH line")
	dir := fs.String("o", ".", "the directory of the man<section> directories")
	fs.Parse(args)
	for _, path := range fs.Args() {
		md, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		p, err := manpage.Convert(md, h)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out := filepath.Join(*dir, "man"+p.Section, p.FileName())
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, p.Roff, 0o644); err != nil {
			return err
		}
	}
	return nil
}
