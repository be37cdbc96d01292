package oneshot

import (
	"os"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
)

// Intent is the intent files a command was given, read, parsed and
// validated as a whole.
type Intent struct {
	// Paths are the files as given, in order.
	Paths []string
	// Files are the files parsed, by path.
	Files map[string]*intent.Intent
	// Size is how many bytes the files hold.
	Size int
	// Protected are the links the files mark "protected": true.
	Protected []string
	// Drift are the items' drift policies other than repair.
	Drift render.DriftPolicies
}

// ReadFiles reads the intent files at paths, keyed by their paths as
// given. A file given twice is a *UsageError; a file that cannot be read
// is the read's error (I/O, not an invalid intent).
func ReadFiles(paths []string) (map[string][]byte, int, error) {
	files := make(map[string][]byte, len(paths))
	size := 0
	for _, p := range paths {
		if _, dup := files[p]; dup {
			return nil, 0, &UsageError{Msg: p + ": given twice"}
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, 0, err
		}
		files[p] = data
		size += len(data)
	}
	return files, size, nil
}

// Load reads and parses the intent files at paths (render.ParseFiles) and
// works out what they protect and their drift policies. An intent that
// does not parse or merge is an *InvalidError. Load does not render: the
// one render of a command is Prepare's (or RenderPlain's). sized, when
// set, is told how many bytes the files hold before they are parsed (the
// CLI sizes its garbage collector by it).
func Load(paths []string, sized func(bytes int)) (*Intent, error) {
	data, size, err := ReadFiles(paths)
	if err != nil {
		return nil, err
	}
	if sized != nil {
		sized(size)
	}
	files, err := render.ParseFiles(data)
	if err != nil {
		return nil, &InvalidError{Err: render.AllProblems(data, files, err)}
	}
	in := &Intent{Paths: paths, Files: files, Size: size, Protected: render.ProtectedLinks(files)}
	if in.Drift, err = render.DriftOf(files); err != nil {
		return nil, &InvalidError{Err: err}
	}
	return in, nil
}

// RenderPlain renders in without the host's facts: what validate and graph
// draw, and the whole of validation. A render error is an *InvalidError.
func (o *Options) RenderPlain(in *Intent) (*dg.Graph, error) {
	g, err := o.renderer()(in.Files, render.Facts{})
	if err != nil {
		return nil, &InvalidError{Err: err}
	}
	return g, nil
}

// Validated is the result of Validate.
type Validated struct {
	Intent *Intent
	Graph  *dg.Graph
}

// Validate reads, parses, merges, validates and renders the intent files
// at paths: what `netagent validate` checks.
func Validate(paths []string, sized func(bytes int)) (*Validated, error) {
	in, err := Load(paths, sized)
	if err != nil {
		return nil, err
	}
	g, err := (&Options{}).RenderPlain(in)
	if err != nil {
		return nil, err
	}
	return &Validated{Intent: in, Graph: g}, nil
}
