package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
)

// readOnly are the requests a connection beyond MaxConnections may make:
// they answer from a snapshot and end at once (a watch streams for as
// long as the client likes: it takes a slot of MaxConnections).
var readOnly = map[string]bool{CmdStatus: true, CmdShow: true, CmdMetrics: true}

// requestTimeout bounds reading a request and writing its answer; the
// loop's work in between is bounded by the caller's patience only.
const requestTimeout = 30 * time.Second

// refuseTimeout bounds how long a refused connection's request is read
// (and dropped) after its error answer; maxRefusing bounds the refused
// connections so handled at once (beyond, accepting waits for one to end,
// refuseTimeout at most: see refuse).
const (
	refuseTimeout = time.Second
	maxRefusing   = 4 * MaxConnections
)

// drainTimeout bounds how long the rest of an over-size request is read
// (and discarded) after its error answer, so that the client, still
// writing, sees the answer rather than a broken pipe.
const drainTimeout = 5 * time.Second

// Handler answers the requests that Serve reads: the daemon's loop
// (agent.Agent) is one. Its methods are called from the connections'
// goroutines, several at once.
type Handler interface {
	// Call answers req, any command but CmdWatch. An error (the daemon
	// stopped: ErrNotRunning; ctx ended) is answered as Response.Error.
	Call(ctx context.Context, req Request) (Response, error)
	// Subscribe calls f with the daemon's events, the first an
	// EventStatus (StatusEvent), until ctx ends, the daemon stops
	// (ErrNotRunning) or f fails, and returns why.
	Subscribe(ctx context.Context, f func(Event) error) error
}

// Server serves a Handler on the API's socket (Listen).
type Server struct {
	Handler Handler
	Log     logrus.FieldLogger // refused and bad requests (nil: none)
	// Idle bounds how long a connection may send nothing before its
	// request begins (zero: IdleTimeout).
	Idle time.Duration
}

// Serve serves h on ln until ctx ends, logging to log: see Server.Serve.
func Serve(ctx context.Context, ln *net.UnixListener, h Handler, log logrus.FieldLogger) error {
	return (&Server{Handler: h, Log: log}).Serve(ctx, ln)
}

// Serve answers API requests on ln until ctx ends. It closes ln, which
// removes the socket, and waits for the connections it is serving to end
// (closing them: their requests get no answer) before it returns, so that
// a caller that waits for Serve after Run knows the socket is gone. Only
// peers running as root, or as the agent's own user, are answered; at most
// MaxConnections at once (and ReadOnlyConnections more for status).
func (s *Server) Serve(ctx context.Context, ln *net.UnixListener) error {
	srv := &server{h: s.Handler, log: s.logger().WithField("api", "request"), idle: cmp.Or(s.Idle, IdleTimeout),
		conns: map[*net.UnixConn]struct{}{}, slots: make(chan struct{}, MaxConnections),
		spare: make(chan struct{}, ReadOnlyConnections), refusing: make(chan struct{}, maxRefusing)}
	defer srv.shutdown(ln)
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("accepting API connections: %w", err)
		}
		srv.start(ctx, conn)
	}
}

func (s *Server) logger() logrus.FieldLogger {
	if s.Log != nil {
		return s.Log
	}
	l := logrus.New()
	l.Out = io.Discard
	return l
}

// server tracks the connections of one Serve.
type server struct {
	h     Handler
	log   logrus.FieldLogger
	idle  time.Duration // Server.Idle
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[*net.UnixConn]struct{}
	slots chan struct{} // one per connection being served
	spare chan struct{} // one per connection served beyond slots (readOnly requests)
	// refusing: one per refused connection whose request is being read
	refusing chan struct{}
}

// busyError is the answer to a connection beyond the bound.
func busyError() string {
	return fmt.Sprintf("too many connections (at most %d at once, and %d more for status): %v", MaxConnections, ReadOnlyConnections, ErrBusy)
}

// start serves conn in a goroutine of its own: in a slot of
// MaxConnections, else in a spare one (a readOnly request only), else it
// is refused.
func (s *server) start(ctx context.Context, conn *net.UnixConn) {
	var slot chan struct{}
	allow := func(string) bool { return true }
	select {
	case s.slots <- struct{}{}:
		slot = s.slots
	default:
		select {
		case s.spare <- struct{}{}:
			slot, allow = s.spare, func(cmd string) bool { return readOnly[cmd] }
		default:
			s.refuse(ctx, conn)
			return
		}
	}
	s.track(conn, slot, func() { s.serveConn(ctx, conn, allow) })
}

// track runs serve in a goroutine that Serve waits for, holding slot
// until it returns, then closes conn.
func (s *server) track(conn *net.UnixConn, slot chan struct{}, serve func()) {
	s.mu.Lock()
	s.conns[conn] = struct{}{}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-slot }()
		defer func() {
			s.mu.Lock()
			delete(s.conns, conn)
			s.mu.Unlock()
			conn.Close()
		}()
		serve()
	}()
}

// refuse answers conn with busyError, then reads what the client sends
// (its request) until it closes, for refuseTimeout at most, so that
// closing leaves no unread data (which would reset the client's end).
// Beyond maxRefusing at once, accepting waits (refuseTimeout at most) for
// one of them to end, the clients after it waiting in the listen backlog;
// if none ends, conn gets the answer, its writing side is ended and what
// it sent so far is read without waiting before the close: a client that
// sent its request at once, as every client does, sees the answer and a
// clean end.
func (s *server) refuse(ctx context.Context, conn *net.UnixConn) {
	s.log.Warn("api: refusing a connection: too many connections")
	if !s.takeRefusing(ctx) {
		if writeResponse(conn, Response{Error: busyError()}) == nil {
			conn.CloseWrite()
			dropQueued(conn)
		}
		conn.Close()
		return
	}
	s.track(conn, s.refusing, func() {
		conn.SetWriteDeadline(time.Now().Add(refuseTimeout))
		if writeResponse(conn, Response{Error: busyError()}) == nil {
			drainFor(conn, refuseTimeout)
		}
	})
}

// takeRefusing takes a slot of the refused connections being read,
// waiting refuseTimeout at most.
func (s *server) takeRefusing(ctx context.Context) bool {
	select {
	case s.refusing <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(refuseTimeout)
	defer t.Stop()
	select {
	case s.refusing <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// shutdown closes ln (removing the socket) and every connection, and waits
// for their goroutines.
func (s *server) shutdown(ln *net.UnixListener) {
	ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// serveConn answers the one request of a connection: one that begins
// within idle, and that allow lets in (a spare slot's: readOnly).
func (s *server) serveConn(ctx context.Context, conn *net.UnixConn, allow func(command string) bool) {
	log := s.log
	if err := checkPeer(conn); err != nil {
		log.WithError(err).Warn("api: refusing a connection")
		writeResponse(conn, Response{Error: err.Error()})
		return
	}
	req, err := readRequest(conn, s.idle)
	if err != nil {
		log.WithError(err).Warn("api: bad request")
		writeResponse(conn, Response{Error: err.Error()})
		if errors.Is(err, ErrRequestTooLarge) {
			drainRequest(conn)
		}
		return
	}
	log = log.WithField("command", req.Command)
	if !allow(req.Command) {
		log.Warn("api: refusing a request: too many connections")
		if writeResponse(conn, Response{Error: busyError()}) == nil {
			drainFor(conn, refuseTimeout)
		}
		return
	}
	log.Debug("api: request")
	if req.Command == CmdWatch {
		s.serveWatch(ctx, conn, log)
		return
	}
	resp, err := s.h.Call(ctx, req)
	if err != nil {
		resp = Response{Error: err.Error()}
	}
	if err := writeResponse(conn, resp); err != nil {
		log.WithError(err).Warn("api: writing the response")
	}
}
