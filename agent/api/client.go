package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"time"
)

// Call sends req to the agent listening on the socket at path and returns
// its answer. ctx bounds the whole exchange.
func Call(ctx context.Context, path string, req Request) (*Response, error) {
	conn, err := dial(ctx, path)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	sendErr := json.NewEncoder(conn).Encode(req)
	var resp Response
	if err := json.NewDecoder(conn).Decode(&resp); err != nil {
		if sendErr != nil { // the agent may have answered before it stopped reading
			return nil, fmt.Errorf("sending the request to %s: %w", path, sendErr)
		}
		return nil, fmt.Errorf("reading the answer from %s: %w", path, err)
	}
	return &resp, nil
}

// Watcher reads the event stream of an agent's socket (Watch).
type Watcher struct {
	conn net.Conn
	dec  *json.Decoder
	stop func() bool
}

// Watch connects to the agent at path and subscribes to its events; the
// first one Next returns is the status they start from (EventStatus).
// Ending ctx ends the stream.
func Watch(ctx context.Context, path string) (*Watcher, error) {
	conn, err := dial(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := json.NewEncoder(conn).Encode(Request{Command: CmdWatch}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("sending the request to %s: %w", path, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	return &Watcher{conn: conn, dec: json.NewDecoder(conn), stop: stop}, nil
}

// Next returns the next event. An agent that refused the request answers
// with an Error: Next returns it.
func (w *Watcher) Next() (Event, error) {
	var raw struct {
		Event
		Error string `json:"error,omitempty"`
	}
	if err := w.dec.Decode(&raw); err != nil {
		return Event{}, err
	}
	if raw.Error != "" {
		return Event{}, fmt.Errorf("the agent answered: %s", raw.Error)
	}
	return raw.Event, nil
}

// Close ends the stream.
func (w *Watcher) Close() error {
	w.stop()
	return w.conn.Close()
}

// dial connects to the agent's socket at path.
func dial(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("connecting to the agent at %s: %w", path, err)
	}
	return conn, nil
}
