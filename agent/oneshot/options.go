package oneshot

import (
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
)

// DefaultLockTimeout bounds the wait for another writer.
const DefaultLockTimeout = 30 * time.Second

// Options say which namespace a command acts on and how.
type Options struct {
	// Netns is the named network namespace ("": the host's).
	Netns string
	// StateDir is the namespace's state directory.
	StateDir string
	// Command names the command in the lock's holder ("apply" when empty).
	Command string
	// Write: the command changes the kernel. Gate takes the namespace's
	// lock for it; Prepare reverts a pending trial first.
	Write bool
	// LockTimeout bounds the wait for another one-shot writer (writers).
	LockTimeout time.Duration
	// ResolvConf is --resolv-conf: where the intent's DNS goes ("": DNS is
	// left alone).
	ResolvConf string
	// Protect are the links of --protect; Force applies even what would
	// disrupt one, and deletes the orphans.
	Protect []string
	Force   bool
	// Adopt is --adopt: the objects someone else made at the places of
	// intended items are taken over instead of refused (host.Options.Adopt).
	Adopt bool
	// Log receives what the steps log (nil: logrus's standard logger).
	Log logrus.FieldLogger
	// Render renders the intent files with facts (nil:
	// render.RenderFilesWith). Tests count renders with it.
	Render Renderer
	// Sized, when set, is told how many bytes the intent files hold before
	// they are parsed (the CLI sizes its garbage collector by it).
	Sized func(bytes int)
	// Recovered, when set, is told what Prepare found of a pending trial,
	// as soon as it knows (before the render).
	Recovered func(Recovered)
	// Fake, when set, stands for the namespace: the commands run over
	// these fakes (host.OpenFake) instead of the kernel, with the state
	// directory StateDir (plan --against a snapshot).
	Fake *configurators.Fake
}

// open opens the namespace the commands act on: Netns, or the fakes.
func (o *Options) open() (*host.Runtime, error) {
	if o.Fake != nil {
		return host.OpenFakeWith(o.Fake, o.StateDir, o.log(), host.Options{})
	}
	return host.Open(o.Netns, o.StateDir, o.log())
}

// Renderer renders intent files with the host's facts.
type Renderer func(files map[string]*intent.Intent, f render.Facts) (*dg.Graph, error)

// command names the command in the lock's holder.
func (o *Options) command() string {
	if o.Command == "" {
		return "apply"
	}
	return o.Command
}

func (o *Options) log() logrus.FieldLogger {
	if o.Log == nil {
		return logrus.StandardLogger()
	}
	return o.Log
}

func (o *Options) renderer() Renderer {
	if o.Render == nil {
		return render.RenderFilesWith
	}
	return o.Render
}

// OutputFormat is the version of the JSON shapes of the results (apply,
// check, validate, show --all and status): it changes only when a field
// changes meaning or goes away; new fields may come.
const OutputFormat = 1
