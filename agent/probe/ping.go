package probe

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/netagent/netagent/internal/netnsx"
)

// Ping passes when one of Count ICMP echo requests, sent one every
// Interval, is answered within Timeout of the first.
type Ping struct {
	Addr netip.Addr
	Schedule
}

func (p *Ping) String() string { return "ping:" + p.Addr.String() + p.Schedule.options() }

// Schedule is when a probe that sends requests (ping, arping) sends them:
// Count of them, one every Interval, answered within Timeout of the first.
type Schedule struct {
	Count    int
	Interval time.Duration
	Timeout  time.Duration
}

func defaultSchedule() Schedule {
	return Schedule{Count: DefaultCount, Interval: DefaultInterval, Timeout: DefaultTimeout}
}

// options are the spec's options that differ from the defaults.
func (s Schedule) options() string {
	var out string
	if s.Count != DefaultCount {
		out += fmt.Sprintf(",count=%d", s.Count)
	}
	if s.Interval != DefaultInterval {
		out += ",interval=" + s.Interval.String()
	}
	if s.Timeout != DefaultTimeout {
		out += ",timeout=" + s.Timeout.String()
	}
	return out
}

// parse sets the schedule from a spec's options.
func (s *Schedule) parse(opts string) error {
	return parseOptions(opts, map[string]func(string) error{
		"count":    func(v string) error { return parseCount(v, &s.Count) },
		"interval": func(v string) error { return parseDuration(v, &s.Interval) },
		"timeout":  func(v string) error { return parseDuration(v, &s.Timeout) },
	})
}

// Run opens an ICMP socket inside the namespace and exchanges echoes
// through it from here: the socket stays in the namespace it was made in.
func (p *Ping) Run(ctx context.Context, tgt *netnsx.Target) error {
	c, err := openEcho(tgt, p.Addr)
	if err != nil {
		return fmt.Errorf("probe %s: %w", p, err)
	}
	defer c.close()
	stop := context.AfterFunc(ctx, c.close) // wakes a blocked read
	defer stop()
	err = p.exchange(c)
	if ctx.Err() != nil {
		return fmt.Errorf("probe %s: %w", p, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("probe %s: %w", p, err)
	}
	return nil
}

// exchange sends the echoes on schedule and reads until a matching reply
// or the timeout. Between sends it blocks in the read, with the read's
// deadline at the next send or the timeout.
func (p *Ping) exchange(c *echoConn) error {
	start := time.Now()
	deadline, next := start.Add(p.Timeout), start
	sent := 0
	var lastErr error
	for {
		if sent < p.Count && !time.Now().Before(next) {
			if err := c.send(uint16(sent)); err != nil {
				lastErr = err
			}
			sent++
			next = next.Add(p.Interval)
		}
		wait := deadline
		if sent < p.Count && next.Before(wait) {
			wait = next
		}
		ok, err := c.recv(wait, sent)
		switch {
		case ok:
			return nil
		case isTimeout(err):
			if !time.Now().Before(deadline) {
				return p.failure(sent, lastErr)
			}
		case isTransient(err):
			lastErr = err
		case err != nil:
			return err
		}
	}
}

func (p *Ping) failure(sent int, lastErr error) error {
	err := fmt.Errorf("%w: no reply to %d echo requests within %v", ErrFailed, sent, p.Timeout)
	if lastErr != nil {
		err = fmt.Errorf("%w (last error: %w)", err, lastErr)
	}
	return err
}
