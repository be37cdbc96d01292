package reconciler_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// item is a test item: Value can change in place, Fixed only by a recreate.
type item struct {
	typ, name string
	Value     string
	Fixed     string
	external  bool
	deps      []dg.Dependency
	key       string // conflict key (dg.Conflicter); "" for none
}

func (i *item) ConflictKeys() []string {
	if i.key == "" {
		return nil
	}
	return []string{i.key}
}

// conflicting returns a copy of i with conflict key k.
func (i *item) conflicting(k string) *item {
	c := *i
	c.key = k
	return &c
}

func (i *item) Type() string                  { return i.typ }
func (i *item) Name() string                  { return i.name }
func (i *item) External() bool                { return i.external }
func (i *item) Dependencies() []dg.Dependency { return i.deps }
func (i *item) String() string                { return fmt.Sprintf("%s/%s=%s", i.typ, i.name, i.Value) }
func (i *item) Equal(o dg.Item) bool {
	x := o.(*item)
	return i.Value == x.Value && i.Fixed == x.Fixed && i.external == x.external && depsEqual(i.deps, x.deps)
}

func depsEqual(a, b []dg.Dependency) bool {
	return slices.EqualFunc(a, b, func(x, y dg.Dependency) bool {
		return x.RequiredItem == y.RequiredItem && x.RecreateWhenModified == y.RecreateWhenModified &&
			(x.MustSatisfy == nil) == (y.MustSatisfy == nil)
	})
}

func mk(typ, name string, deps ...string) *item {
	it := &item{typ: typ, name: name}
	for _, d := range deps {
		t, n, _ := strings.Cut(d, "/")
		it.deps = append(it.deps, dg.Dependency{RequiredItem: dg.ItemRef{Type: t, Name: n}})
	}
	return it
}

func ext(typ, name string) *item { return &item{typ: typ, name: name, external: true} }

func (i *item) with(value string) *item {
	c := *i
	c.Value = value
	return &c
}

func (i *item) fixed(f string) *item {
	c := *i
	c.Fixed = f
	return &c
}

func ref(s string) dg.ItemRef {
	t, n, _ := strings.Cut(s, "/")
	return dg.ItemRef{Type: t, Name: n}
}

// recorder is a configurator that records calls and can fail or go async.
type recorder struct {
	mu      sync.Mutex
	calls   []string
	fail    map[string]error // by "op type/name"
	async   map[string]chan error
	batches [][]string
}

func newRecorder() *recorder {
	return &recorder{fail: map[string]error{}, async: map[string]chan error{}}
}

func (r *recorder) do(ctx context.Context, op string, it dg.Item) error {
	key := op + " " + dg.Ref(it).String()
	r.mu.Lock()
	r.calls = append(r.calls, key)
	err := r.fail[key]
	ch, async := r.async[key]
	r.mu.Unlock()
	if async {
		done := reconciler.ContinueInBackground(ctx)
		go func() {
			select {
			case e := <-ch:
				done(e)
			case <-ctx.Done():
				done(errors.New("canceled"))
			}
		}()
		return nil
	}
	return err
}

func (r *recorder) Create(ctx context.Context, it dg.Item) error { return r.do(ctx, "create", it) }
func (r *recorder) Modify(ctx context.Context, _, it dg.Item) error {
	return r.do(ctx, "modify", it)
}
func (r *recorder) Delete(ctx context.Context, it dg.Item) error { return r.do(ctx, "delete", it) }
func (r *recorder) NeedsRecreate(o, n dg.Item) bool              { return o.(*item).Fixed != n.(*item).Fixed }

func (r *recorder) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func registry(c reconciler.Configurator, types ...string) *reconciler.TypeRegistry {
	reg := &reconciler.TypeRegistry{}
	for _, t := range types {
		if err := reg.Register(t, c); err != nil {
			panic(err)
		}
	}
	return reg
}

func opsOf(log reconciler.OperationLog) []string {
	out := make([]string, 0, len(log))
	for _, e := range log {
		s := e.Op.String() + " " + e.Ref.String()
		if e.InProgress {
			s += " (in progress)"
		}
		if e.Err != nil {
			s += " (failed)"
		}
		out = append(out, s)
	}
	return out
}
