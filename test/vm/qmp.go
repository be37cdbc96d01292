package vm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"time"
)

// The harness drives qemu's monitor through QMP, its JSON protocol, on a
// unix socket (-qmp unix:<path>,server=on,wait=off): every command gets a
// "return" or an "error" with qemu's own message, which the human monitor
// (-monitor) would print between prompts and escape sequences.

// qmpTimeout bounds one monitor conversation.
const qmpTimeout = 15 * time.Second

type qmpConn struct {
	conn net.Conn
	r    *bufio.Reader
}

// dialQMP connects to the monitor socket, reads the greeting and leaves
// capabilities negotiation mode, after which qemu takes commands.
func dialQMP(sock string) (*qmpConn, error) {
	conn, err := net.DialTimeout("unix", sock, qmpTimeout)
	if err != nil {
		return nil, fmt.Errorf("qemu monitor %s: %w", sock, err)
	}
	if err := conn.SetDeadline(time.Now().Add(qmpTimeout)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("qemu monitor %s: %w", sock, err)
	}
	q := &qmpConn{conn: conn, r: bufio.NewReader(conn)}
	if _, err := q.read(); err != nil { // {"QMP": {"version": ...}}
		q.Close()
		return nil, fmt.Errorf("qemu monitor %s: greeting: %w", sock, err)
	}
	if err := q.execute("qmp_capabilities", nil); err != nil {
		q.Close()
		return nil, fmt.Errorf("qemu monitor %s: %w", sock, err)
	}
	return q, nil
}

func (q *qmpConn) Close() error { return q.conn.Close() }

// qmpReply is one line from qemu: a greeting, an event, a return or an error.
type qmpReply struct {
	QMP    json.RawMessage `json:"QMP"`
	Event  string          `json:"event"`
	Return json.RawMessage `json:"return"`
	Error  *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
}

func (q *qmpConn) read() (qmpReply, error) {
	var r qmpReply
	line, err := q.r.ReadBytes('\n')
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, fmt.Errorf("reply %q: %w", line, err)
	}
	return r, nil
}

// execute sends one command and waits for its reply, passing over the
// events qemu sends in between.
func (q *qmpConn) execute(cmd string, args any) error {
	msg, err := json.Marshal(struct {
		Execute   string `json:"execute"`
		Arguments any    `json:"arguments,omitempty"`
	}{cmd, args})
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if _, err := q.conn.Write(append(msg, '\n')); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	for {
		r, err := q.read()
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", cmd, err)
		case r.Error != nil:
			return fmt.Errorf("%s: %s: %s", cmd, r.Error.Class, r.Error.Desc)
		case r.Return != nil:
			return nil
		case r.Event == "":
			return fmt.Errorf("%s: reply with neither return, error nor event", cmd)
		}
	}
}

// hotAdd plugs n into the running VM: a hub port for it, then the device in
// its slot, which the guest learns of through ACPI hotplug.
func hotAdd(sock string, n NIC) error {
	q, err := dialQMP(sock)
	if err != nil {
		return err
	}
	defer q.Close()
	netdev := map[string]any{"type": "hubport", "id": n.netdevID(), "hubid": 0}
	device := map[string]any{"driver": n.Model, "id": n.ID, "netdev": n.netdevID(), "mac": n.MAC,
		"bus": "pci.0", "addr": fmt.Sprintf("0x%x", n.Slot)}
	if err := q.execute("netdev_add", netdev); err != nil {
		return fmt.Errorf("NIC %s: %w", n.ID, err)
	}
	if err := q.execute("device_add", device); err != nil {
		return fmt.Errorf("NIC %s: %w", n.ID, err)
	}
	return nil
}
