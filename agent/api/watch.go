package api

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"time"

	"github.com/sirupsen/logrus"
)

// serveWatch streams the handler's events on conn until the client hangs
// up, a write takes longer than requestTimeout, or ctx ends.
func (s *server) serveWatch(ctx context.Context, conn *net.UnixConn, log logrus.FieldLogger) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn.SetReadDeadline(time.Time{})
	go func() { // the client sends nothing more: its end of the stream is a hang-up
		io.Copy(io.Discard, conn)
		cancel()
	}()
	enc := json.NewEncoder(conn)
	err := s.h.Subscribe(ctx, func(e Event) error {
		conn.SetWriteDeadline(time.Now().Add(requestTimeout))
		return enc.Encode(e)
	})
	if err != nil && ctx.Err() == nil {
		log.WithError(err).Debug("api: watch ended")
	}
}
