package vm

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// console reads the VM's serial output: it keeps all of it, finds the
// harness's markers, and passes the test binary's own lines on to t.Log as
// they arrive.
type console struct {
	t        testing.TB
	start    time.Time
	startTag string // marker the run script prints before the test binary
	exitTag  string // marker it prints after, followed by the exit status
	out      strings.Builder
	res      Result
	hotTag   string          // marker of the guest's hot-add requests, followed by the NIC's ID
	hotAdd   func(id string) // acts on one
	running  bool
	setupErr error
}

// newConsole returns a console for the run with nonce; hotAdd is called
// with the NIC's ID for each hot-add request of the guest.
func newConsole(t testing.TB, nonce string, hotAdd func(id string)) *console {
	return &console{t: t, startTag: markerPrefix + "START-" + nonce,
		exitTag: markerPrefix + "EXIT-" + nonce + " ", hotTag: hotAddMarker(nonce), hotAdd: hotAdd,
		res: Result{ExitCode: -1}}
}

// read consumes r up to EOF, which comes when qemu exits.
func (c *console) read(r io.Reader) {
	c.t.Helper() // so the test's lines carry the caller's position
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			c.line(strings.TrimRight(line, "\r\n"))
		}
		if err != nil {
			return
		}
	}
}

func (c *console) line(line string) {
	c.t.Helper()
	line = strings.ReplaceAll(line, "\r", "")
	c.out.WriteString(line + "\n")
	switch {
	case strings.Contains(line, c.startTag):
		c.running = true
		c.res.Boot = time.Since(c.start)
	case strings.Contains(line, c.exitTag):
		c.finish(line)
	case c.running && strings.Contains(line, c.hotTag):
		_, id, _ := strings.Cut(line, c.hotTag)
		c.hotAdd(strings.TrimSpace(id))
	case strings.Contains(line, markerPrefix+"SETUP-FAILED: "):
		_, what, _ := strings.Cut(line, markerPrefix+"SETUP-FAILED: ")
		c.setupErr = fmt.Errorf("vm init failed: %s", what)
	case c.running && line != "":
		c.t.Log("vm| " + line)
		c.res.recordTestLine(line)
	}
}

func (c *console) finish(line string) {
	c.running = false
	_, code, _ := strings.Cut(line, c.exitTag)
	if n, err := strconv.Atoi(strings.TrimSpace(code)); err == nil {
		c.res.ExitCode = n
	}
}

func (c *console) result() Result {
	r := c.res
	r.Output = c.out.String()
	return r
}
