package agent

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
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("connecting to the agent at %s: %w", path, err)
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
