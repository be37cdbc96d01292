package etcdtest

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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

// Without the binary the tests skip, except under CI, where they fail.
func TestMissingBinary(t *testing.T) {
	missing := func(string) (string, error) { return "", exec.ErrNotFound }
	nowhere := filepath.Join(t.TempDir(), Binary)
	if _, err := lookBinary(missing, nowhere, ""); err == nil || errors.Is(err, errMissingInCI) {
		t.Errorf("outside CI: %v, want an error to skip on", err)
	}
	if _, err := lookBinary(missing, nowhere, "true"); !errors.Is(err, errMissingInCI) {
		t.Errorf("in CI: %v, want errMissingInCI", err)
	}
	if err := os.WriteFile(nowhere, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if bin, err := lookBinary(missing, nowhere, "true"); err != nil || bin != nowhere {
		t.Errorf("with the fallback present: %q, %v", bin, err)
	}
}
