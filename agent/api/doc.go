// Package api is the daemon's socket protocol: its types (Request,
// Response, Event), the server (Listen, Serve) with its limits, the
// clients (Call, Watch), and the status stream's fan-out (Hub) with the
// events it carries (EventsBetween, a pure diff of two statuses).
//
// It knows nothing of the daemon's loop: Serve answers through a Handler
// (the agent root's *Agent is one), and the loop publishes its events into
// a Hub. It must never import the agent root package.
//
// # Framing
//
// One request per connection: the client connects to the unix socket,
// sends one Request as a JSON object, and reads one Response as a JSON
// object; then the connection ends.
//
//	client ── {"command":"status"}\n ──▶ server
//	client ◀── {"status":{...}}\n ─────── server   (close)
//
// A watch (CmdWatch) is the exception: the client keeps the connection
// open and sends nothing more; the server answers with one Event per line,
// the first an EventStatus holding the whole status, then one whenever
// the status changes: a condition of a document flips, an item changes
// state (fails, recovers, is blocked), an item drifts, an external link
// goes down or up, a trial starts or ends, the daemon becomes ready or
// stops being so. The client ends the stream by hanging up.
//
// # Limits
//
//   - A request is at most MaxRequestSize bytes; a larger one is answered
//     with ErrRequestTooLarge, and the rest of it is read and dropped (for
//     a bounded time) so the client sees the answer, not a broken pipe.
//   - A request must begin within IdleTimeout of connecting (ErrIdle) and
//     be read, and its answer written, within a request timeout each.
//   - At most MaxConnections are served at once, and ReadOnlyConnections
//     more for status, show and metrics; a connection beyond both gets the
//     ErrBusy answer and its request is read and dropped before the close,
//     so that it reads a clean end of stream, never a reset.
//   - Only peers running as root or as the daemon's user are answered
//     (SO_PEERCRED, ErrPermission); Listen makes the socket mode 0600.
//
// # Events
//
// The loop publishes at the end of each of its turns, and only while
// someone watches: the changes between the status it last published and
// the current one (SnapshotOf, EventsBetween). Hub.Publish never waits for
// a client: each Subscriber has a bounded buffer (WatchBuffer); when it is
// full the events that follow are dropped and counted, and the client gets
// one EventMissed with their number once it has read what was buffered,
// before anything published after the gap.
//
// # Rules
//
//   - The Handler's methods are called from the connections' goroutines,
//     several at once; Serve never waits for the loop except through them.
//   - Everything the server sends is a Response or an Event; an error of
//     the Handler is answered as Response.Error, never as a closed
//     connection.
//   - Event's shape is versioned (EventFormat): fields change meaning or go
//     away only with a new format.
package api
