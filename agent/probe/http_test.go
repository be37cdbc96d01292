package probe_test

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
)

// webHandler is the test site: /ok (200, "healthy"), /missing (404),
// /hop (a redirect to /ok), /loop (a redirect to itself), /huge (1 MiB of
// padding, then "healthy").
func webHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "all healthy") })
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(strings.Repeat("x", 1<<20) + "healthy"))
	})
	return mux
}

// webServer starts the test site inside tgt on addr (TLS with a
// certificate of httptest's own CA, for 127.0.0.1, ::1 and example.com)
// and returns its host:port and the CA file.
func webServer(t *testing.T, tgt *netnsx.Target, addr string, tls bool) (hostport, caFile string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(webHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused
	if err := tgt.Do(func() (err error) {
		srv.Listener.Close()
		srv.Listener, err = net.Listen("tcp", net.JoinHostPort(addr, "0"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if tls {
		srv.StartTLS()
		caFile = filepath.Join(t.TempDir(), "ca.pem")
		ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		if err := os.WriteFile(caFile, ca, 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String(), caFile
}

func TestHTTP(t *testing.T) {
	here, peer := pair(t)
	srv, _ := webServer(t, peer, peer4, false)
	base := "http://" + srv
	mustPass(t, here, base+"/ok")
	mustPass(t, here, base+"/ok,body=healthy,status=200")
	mustPass(t, here, base+"/hop,body=healthy")
	mustPass(t, here, base+"/missing,status=4xx")
	mustFail(t, here, base+"/missing", "status 404 (want 2xx)")
	mustFail(t, here, base+"/ok,status=204", "status 200 (want 204)")
	mustFail(t, here, base+"/ok,body=sick", `do not hold "sick"`)
	mustFail(t, here, base+"/loop", "more than 3 redirects")
	mustFail(t, here, base+"/huge,body=healthy", `first 65536 bytes do not hold "healthy"`)
	mustFail(t, here, "http://"+absent4+":80/,timeout=300ms", "no answer within 300ms")
	srv6, _ := webServer(t, peer, peer6, false)
	mustPass(t, here, "http://"+srv6+"/ok")
	// Reached from the target namespace only.
	local, _ := webServer(t, here, "127.0.0.1", false)
	mustPass(t, here, "http://"+local+"/ok")
	mustFail(t, testns.New(t), "http://"+local+"/ok", "connection refused")
}

func TestHTTPS(t *testing.T) {
	here, peer := pair(t)
	srv, ca := webServer(t, peer, peer4, true)
	_, port, _ := net.SplitHostPort(srv)
	name := "https://example.com:" + port
	mustFail(t, here, name+"/ok,addr="+peer4, "certificate signed by unknown authority")
	// The certificate names example.com and loopback, not the peer's
	// address.
	mustFail(t, here, "https://"+srv+"/ok,ca="+ca, "not "+peer4)
	mustPass(t, here, name+"/ok,ca="+ca+",addr="+peer4)
	mustPass(t, here, name+"/hop,body=healthy,ca="+ca+",addr="+peer4)
	mustFail(t, here, "https://other.example:"+port+"/ok,ca="+ca+",addr="+peer4, "not other.example")
	// A host name without addr= is looked up with the namespace's
	// resolvers.
	dnsServer(t, peer, peer4+":53")
	resolvConf(t, here, "nameserver "+peer4+"\n")
	mustFail(t, here, "https://gone.test:"+port+"/ok,ca="+ca, "NXDOMAIN")
	bad := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(bad, []byte("not a certificate"), 0o644)
	err := run(t, here, name+"/ok,ca="+bad+",addr="+peer4)
	if err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a CA file without a certificate: %v, want an error saying so", err)
	}
}

// A CA file that is no regular file (a FIFO nobody writes: a spec from
// the store may name anything) is refused at once, not waited on.
func TestHTTPSCAFileNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ca.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(t, testns.New(t), "https://192.0.2.1/ok,ca="+fifo)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO as the CA file: %v, want it refused as not a regular file", err)
	}
}
