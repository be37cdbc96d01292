package etcdtest

import (
	"net/http"
	"testing"
)

func TestStartKillRestart(t *testing.T) {
	s := Start(t, Options{})
	get := func() error {
		resp, err := http.Get(s.ClientURL + "/health")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatalf("etcd does not answer: %v", err)
	}
	s.Kill()
	if err := get(); err == nil {
		t.Fatal("a killed etcd answers")
	}
	s.Restart()
	if err := get(); err != nil {
		t.Fatalf("a restarted etcd does not answer: %v", err)
	}
}
