package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent"
	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/linkwatch"
	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/metrics"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/internal/gctune"
	"github.com/netagent/netagent/internal/profiling"
	"github.com/netagent/netagent/systemd"
)

// defaultSocket is where the daemon listens (systemd's RuntimeDirectory).
const defaultSocket = "/run/netagent/netagent.sock"

func init() {
	register(&command{
		name:    "run",
		summary: "run the daemon: keep the network as the intent directory (and the socket API) say",
		usage:   "[--intent-dir DIR] [--socket PATH] [--metrics-listen ADDR] [--protect LINK]... [--adopt] [--etcd-endpoints URL,... [--etcd-prefix P] [--hostname H] [--group G]... [--label K=V]... [--publish-snapshot INTERVAL]]",
		run:     runDaemon,
		logInfo: true,
	})
}

// daemonOpts are the options of `netagent run`.
type daemonOpts struct {
	intentDir string
	socket    string
	// metricsListen is the address of the HTTP server of the metrics
	// ("": none); see metrics.Server.
	metricsListen string
	drift         time.Duration
	// lockTimeout bounds the wait for a one-shot apply at start.
	lockTimeout time.Duration
	kernel      *kernelOpts
	protect     *protectOpts
	// keepVersions: how many versions of the intent to keep.
	keepVersions int
	// store: the fleet options (runstore.go).
	store  *storeOpts
	member *member.Member // opened by serveDaemon when store is enabled
	// lastTrial: how the last trial ended, as serveDaemon found it.
	lastTrial *status.TrialOutcome
}

func runDaemon(g *globals, args []string) int {
	fs := newFlagSet(g, "run", "[--intent-dir DIR] [--socket PATH]")
	o := &daemonOpts{kernel: kernelFlags(g, fs)}
	fs.StringVar(&o.intentDir, "intent-dir", "/etc/netagent", "directory of intent files (*.json); watched for changes")
	fs.StringVar(&o.socket, "socket", defaultSocket, "unix socket of the API (created with mode 0600)")
	fs.StringVar(&o.metricsListen, "metrics-listen", "",
		"serve the metrics over HTTP at `ADDR`/metrics (host:port, e.g. 127.0.0.1:9630; in the namespace netagent runs in, not --netns's; default: none)")
	fs.DurationVar(&o.drift, "drift-interval", agent.DefaultDriftInterval,
		"how often owned objects are read back and repaired (0: never)")
	fs.DurationVar(&o.lockTimeout, "lock-timeout", oneshot.DefaultLockTimeout, "how long to wait at start while a netagent apply changes the namespace")
	keepFlag(fs, &o.keepVersions)
	resolvConfFlag(fs, o.kernel)
	o.protect = protectFlags(fs, false)
	adoptFlag(fs, o.kernel, "in the first reconcile only,")
	o.store = storeFlags(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if err := o.store.check(); err != nil {
		return usageError(g, fs, err.Error())
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments")
	}
	if o.drift < 0 {
		return usageError(g, fs, "--drift-interval must not be negative")
	}
	if code, ok := checkIntentDir(g, fs, o); !ok {
		return code
	}
	return serveDaemon(g, o)
}

// serveDaemon wires the agent to the kernel, the intent directory, netlink,
// systemd and the socket, and runs it until SIGTERM or SIGINT.
func serveDaemon(g *globals, o *daemonOpts) int {
	lk, code := lockDaemon(g, o)
	if lk == nil {
		return code
	}
	defer lk.Release()
	rt, code := o.kernel.open(g)
	if rt == nil {
		return code
	}
	defer rt.Close()
	if code, ok := prepareDaemon(g, o, rt); !ok {
		return code
	}
	d, code := startDaemon(g, o, rt)
	if d == nil {
		return code
	}
	return d.run(g, o)
}

// prepareDaemon recovers what a trial left pending at the last stop, and
// opens the fleet member (runstore.go).
func prepareDaemon(g *globals, o *daemonOpts, rt *host.Runtime) (int, bool) {
	rec, last, err := oneshot.RecoverAtStart(context.Background(), rt, o.kernel.stateDir(g))
	if err != nil {
		return printError(g, "", err), false
	}
	if rec != nil {
		fmt.Fprintf(g.stderr, "netagent: %s\n", oneshot.RecoveryNote(rec))
	}
	o.lastTrial = last
	return openMember(g, o, rt)
}

// daemon is the agent started, with its socket and metrics server.
type daemon struct {
	a   *agent.Agent
	ln  *net.UnixListener
	ms  *metrics.Server
	cfg agent.Config
}

// startDaemon listens on the socket and builds the agent and its metrics
// server; nil and the exit code on failure.
func startDaemon(g *globals, o *daemonOpts, rt *host.Runtime) (*daemon, int) {
	ln, err := api.Listen(o.socket)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitInternal
	}
	d := &daemon{ln: ln}
	if d.cfg, err = daemonConfig(g, o, rt); err == nil {
		if d.a, err = agent.New(d.cfg); err == nil {
			d.ms, err = metrics.Listen(o.metricsListen, d.a.Metrics())
		}
	}
	if err != nil {
		ln.Close()
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitInternal
	}
	return d, exitOK
}

// run runs the agent, its socket, metrics and fleet member until SIGTERM
// or SIGINT.
func (d *daemon) run(g *globals, o *daemonOpts) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go reloadOnHangup(ctx, d.a)
	profiling.HeapOnSignal(ctx, g.stderr)
	go d.ms.Serve(ctx, g.log)
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		if o.member != nil {
			o.member.Run(ctx) // revokes the status's lease when ctx ends
		}
	}()
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := api.Serve(ctx, d.ln, d.a, g.log); err != nil {
			g.log.WithError(err).Error("the socket API stopped")
		}
	}()
	g.log.WithFields(logrus.Fields{"intent_dir": o.intentDir, "socket": o.socket, "netns": o.kernel.netns,
		"drift_interval": o.drift, "watchdog": d.cfg.WatchdogInterval}).Info("netagent daemon starting")
	err := d.a.Run(ctx)
	// Serve removes the socket when ctx ends and returns after: wait for
	// it, or the process may exit before the socket is gone.
	stop()
	d.ln.Close()
	<-served
	<-wrote
	if err != nil {
		g.log.WithError(err).Error("netagent daemon could not start")
		return exitInternal
	}
	g.log.Info("netagent daemon stopped")
	return exitOK
}

// adoptPolicy is agent.Config.Adopt for `run --adopt` (nil without).
func adoptPolicy(adopt bool, rt *host.Runtime) func(bool) error {
	if !adopt {
		return nil
	}
	return rt.SetAdopt
}

// daemonConfig builds the agent's Config.
func daemonConfig(g *globals, o *daemonOpts, rt *host.Runtime) (agent.Config, error) {
	wd, err := systemd.WatchdogInterval()
	if err != nil {
		return agent.Config{}, err
	}
	drift := o.drift
	if drift == 0 {
		drift = -1 // Config: negative means never
	}
	sources, report := daemonSources(g, o)
	return agent.Config{
		Kernel:           rt.Kernel(),
		Facts:            oneshot.DaemonFacts(rt, o.kernel.resolvConf, g.log),
		Leases:           rt.Leases(),
		LeaseClient:      rt.DHCPClient(),
		Leases6:          rt.Leases6(),
		LeaseClient6:     rt.DHCP6Client(),
		Log:              g.log,
		Sources:          sources,
		Report:           report,
		Links:            linkwatch.NewNetlink(o.kernel.netns, g.log),
		Owned:            linkwatch.NewOwned(o.kernel.netns, g.log),
		Nftables:         rt.NftWatcher(),
		Notifier:         readyNotifier{systemd.NewNotifier()},
		Settled:          gctune.ReturnMemory,
		StateDir:         o.kernel.stateDir(g), // the agent keeps its accepted intents next to the runtime's records
		KeepVersions:     o.keepVersions,
		Guard:            oneshot.NewDaemonGuard(rt, o.protect.links),
		Trials:           trial.OnRuntime(rt),
		Probe:            trial.Probes(rt),
		PreCheck:         trial.PreChecks(rt),
		Watch:            trial.Watches(rt),
		TrialDir:         o.intentDir,
		LastTrial:        o.lastTrial,
		Adopt:            adoptPolicy(o.kernel.adopt, rt),
		FindLeases:       oneshot.DaemonFindLeases(o.kernel.adopt, rt),
		DriftInterval:    drift,
		WatchdogInterval: wd / 2,
	}, nil
}

// reloadOnHangup turns SIGHUP (systemctl reload) into Agent.Reload.
func reloadOnHangup(ctx context.Context, a *agent.Agent) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			a.Reload()
		}
	}
}

// The daemon's kernel is the target's (host.Kernel).
var _ agent.Kernel = (*host.Kernel)(nil)

// readyNotifier is the daemon's agent.Notifier: after telling the service
// manager it is ready (after the first reconcile, and after a reload), it
// returns the heap's free memory to the kernel (debug.FreeOSMemory: one
// collection), which the runtime would otherwise do over minutes.
type readyNotifier struct {
	agent.Notifier
}

func (n readyNotifier) Ready() error {
	err := n.Notifier.Ready()
	debug.FreeOSMemory()
	return err
}
