package member

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/netagent/netagent/fleet"
)

// The checks of the operator's options before a connection: the errors
// name the options of `netagent fleet` and `netagent run`.

// Endpoints splits a comma-separated list of URLs (--etcd-endpoints).
func Endpoints(s string) []string {
	var eps []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			eps = append(eps, e)
		}
	}
	return eps
}

// CheckConn validates the connection options as the operator gives them:
// endpoints (comma-separated, at least one URL), and in c a certificate
// with its key and a positive timeout.
func CheckConn(endpoints string, c Conn) error {
	if endpoints == "" {
		return errors.New("--etcd-endpoints is required")
	}
	if len(Endpoints(endpoints)) == 0 {
		return fmt.Errorf("--etcd-endpoints %q: no URL", endpoints)
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return errors.New("--etcd-cert and --etcd-key go together")
	}
	if c.Timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	return nil
}

// Check validates the place: at most one of --host and --group (with
// need, exactly one), and their names.
func (p Place) Check(need bool) error {
	if p.Host != "" && p.Group != "" {
		return errors.New("give --host or --group, not both")
	}
	if need && p.Host == "" && p.Group == "" {
		return errors.New("give --host HOST or --group GROUP")
	}
	if p.Host != "" {
		if err := fleet.CheckName("host", p.Host); err != nil {
			return err
		}
	}
	if p.Group != "" {
		return fleet.CheckName("group", p.Group)
	}
	return nil
}

// DocName is the document's name: name (--name), or else the one
// argument of args; an error if there is none, or both.
func DocName(name string, args []string) (string, error) {
	switch {
	case len(args) == 0 && name != "":
		return name, nil
	case len(args) == 1 && name == "":
		return args[0], nil
	case len(args) == 0:
		return "", errors.New("give the document's name: --name DOC")
	}
	return "", errors.New("give the document's name once: --name DOC or DOC")
}

// MinStatusTTL is the shortest lease of a member's status (--status-ttl).
const MinStatusTTL = 3 * time.Second

// CheckHost validates a member's own options before a connection: its
// name in the fleet (hostname; "" the machine's hostname) and the lease
// of its status (ttl). It returns the name.
func CheckHost(hostname string, ttl time.Duration) (string, error) {
	if hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("the machine's hostname: %w (give --hostname)", err)
		}
		hostname = h
	}
	if err := fleet.CheckName("host", hostname); err != nil {
		return "", err
	}
	if ttl < MinStatusTTL {
		return "", errors.New("--status-ttl must be at least 3s")
	}
	return hostname, nil
}
