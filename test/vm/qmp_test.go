package vm

import (
	"bufio"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"
)

// fakeQMP serves one monitor connection on a unix socket: the greeting,
// then for each command an event and the reply reply gives. The function
// it returns waits for the client to hang up and returns the commands.
func fakeQMP(t *testing.T, reply func(cmd string, args map[string]any) string) (string, func() []string) {
	t.Helper()
	sock := monitorSocket(t)
	l, err := net.Listen("unix", sock)
	must(t, err)
	t.Cleanup(func() { l.Close() })
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		conn.Write([]byte(`{"QMP": {"version": {}, "capabilities": []}}` + "\r\n"))
		sc := bufio.NewScanner(conn)
		for sc.Scan() {
			var msg struct {
				Execute   string         `json:"execute"`
				Arguments map[string]any `json:"arguments"`
			}
			if json.Unmarshal(sc.Bytes(), &msg) != nil {
				return
			}
			got = append(got, sc.Text())
			conn.Write([]byte(`{"event": "NIC_RX_FILTER_CHANGED", "data": {}}` + "\r\n" + reply(msg.Execute, msg.Arguments) + "\r\n"))
		}
	}()
	return sock, func() []string { <-done; return got }
}

func TestHotAddSendsNetdevThenDevice(t *testing.T) {
	sock, commands := fakeQMP(t, func(string, map[string]any) string { return `{"return": {}}` })
	if err := hotAdd(sock, testNICs[2]); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"execute":"qmp_capabilities"}`,
		`{"execute":"netdev_add","arguments":{"hubid":0,"id":"net-hot0","type":"hubport"}}`,
		`{"execute":"device_add","arguments":{"addr":"0x8","bus":"pci.0","driver":"e1000","id":"hot0","mac":"52:54:00:00:00:20","netdev":"net-hot0"}}`,
	}
	if got := commands(); !slices.Equal(got, want) {
		t.Errorf("commands:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestHotAddReportsQEMUsError(t *testing.T) {
	sock, commands := fakeQMP(t, func(cmd string, _ map[string]any) string {
		if cmd == "device_add" {
			return `{"error": {"class": "GenericError", "desc": "PCI: slot 8 function 0 not available for e1000, in use by e1000,id=x"}}`
		}
		return `{"return": {}}`
	})
	err := hotAdd(sock, testNICs[2])
	if err == nil || !strings.Contains(err.Error(), "NIC hot0: device_add: GenericError: PCI: slot 8 function 0 not available") {
		t.Errorf("hotAdd = %v, want qemu's error with the NIC and the command", err)
	}
	if n := len(commands()); n != 3 {
		t.Errorf("%d commands, want capabilities, netdev_add, device_add", n)
	}
}
