package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/web"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/cron"
	"github.com/nanobot-durable/nanobot/internal/residency"
	"github.com/nanobot-durable/nanobot/metrics"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/stores"
	"github.com/nanobot-durable/nanobot/workers"
)

// gateway runs the workers and every enabled channel until SIGINT/SIGTERM.
func (a *app) gateway(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "install-service" {
		return a.installService("gateway", args[1:])
	}
	return a.serveWorkers(ctx, "gateway", args, nil)
}

// worker runs only the workers, to scale out against a Temporal cluster.
func (a *app) worker(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "install-service" {
		return a.installService("worker", args[1:])
	}
	return a.serveWorkers(ctx, "worker", args, map[string]bool{})
}

// Describer is a channel that has something to tell at start (a URL).
type Describer interface{ Describe() string }

// serveWorkers runs the workers and the channels: every enabled one, or
// only those named in only (none for a plain worker).
func (a *app) serveWorkers(ctx context.Context, name string, args []string, only map[string]bool) error {
	fs := a.flags(name)
	workspace := fs.Bool("workspace", name != "worker",
		"hold the workspace: run its tools, prompt files and Dream's edits (a worker holds it by default only with the files store)")
	fs.String("health-addr", os.Getenv(healthAddrEnv), "serve /health and /ready on host:port (off: none; the gateway's default is gateway.host:gateway.port)")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	if name == "worker" && !flagSet(fs, "workspace") {
		*workspace = cfg.Database.URL == "" // files: every worker shares this home, so it holds the workspace
	}
	m := cfg.ActiveModel()
	if _, err := providers.Resolve(cfg, m); err != nil {
		if !errors.Is(err, providers.ErrNoModel) {
			return err
		}
		fmt.Fprintf(a.stdout, "! %v\n  Turns will fail with this message until it is set (config: %s).\n", err, cfg.Path)
	}
	sandbox, network := a.sandboxStatus(a.stdout, cfg)
	if port := cfg.Gateway.MetricsPort; port > 0 {
		stop, err := a.serveMetrics(cfg.Gateway.Host, port)
		if err != nil {
			return err
		}
		defer stop()
	}
	var health *healthServer // listening before the slow part of the start, so a taken port fails at once
	if addr, key := healthAddr(name, fs, cfg); addr != "" {
		if health, err = listenHealth(addr, key, name, cfg, a.secrets, a.log); err != nil {
			return err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = health.Shutdown(sctx)
		}()
	}
	st, err := stores.Open(ctx, cfg, a.log)
	if err != nil {
		return err
	}
	defer st.Close()
	deps := channels.Deps{
		Config: cfg, Workspace: cfg.Agents.Defaults.WorkspacePath(),
		ProcessQueue: "nanobot-" + name + "-" + randomID(), Log: a.log,
		Pairing: st.Pairing, Sessions: st.Sessions,
		Home: config.ConfigDir(cfg.Path), Secrets: a.secrets, Seen: st.SeenKeys(cfg.Instance()),
		State: st.ChannelState(cfg.Instance()),
	}
	if health != nil {
		deps.Shared = health.srv
	}
	built := channels.Build(cfg, deps, only)
	if len(built.Refused) > 0 {
		return errors.Join(built.Refused...)
	}
	for _, w := range built.Warnings {
		fmt.Fprintln(a.stdout, "! "+w)
		a.log.Warn(w)
	}
	mgr := channels.NewManager()
	for _, c := range built.Channels {
		mgr.Add(c)
	}
	reloaded := make(chan *config.Config, 4)
	r, err := a.startRuntime(ctx, cfg, workers.Options{
		Turns: true, Models: true, Workspace: *workspace, DeliveryQueues: built.Queues, Channels: mgr,
		StopTimeout: stopTimeout(), OnReload: func(c *config.Config) { reloaded <- c }, Stores: st,
		Identity: workers.ProcessIdentity(),
	})
	if err != nil {
		return err
	}
	defer r.Close()
	if err := a.ensureUpkeep(ctx, name, r, cfg); err != nil {
		fmt.Fprintln(a.stdout, "! "+err.Error())
		a.log.Warn("memory schedules", "error", err)
	}
	mgr.Bus, mgr.Log, mgr.Config, mgr.Pairing, mgr.Owner = r.bus, a.log, cfg, deps.Pairing, st.Owner
	mgr.Unified = cfg.Agents.Defaults.UnifiedSession
	restart := make(chan protocol.Route, 1)
	if name == "gateway" {
		mgr.Restart = func(from protocol.Route) {
			select {
			case restart <- from:
			default: // one restart at a time
			}
		}
	}
	useTemporal(mgr, r)
	wanted := mgr.Names() // before Start, which drops the channels that fail
	for _, err := range mgr.Start(ctx, r.hub) {
		if len(only) > 0 {
			return err // `serve` exists to serve its channel
		}
		fmt.Fprintln(a.stdout, "! "+err.Error())
		a.log.Error("channel failed to start", "error", err)
	}
	if health != nil {
		health.setChecks(readyChecks(r, mgr, wanted, st))
	}
	a.banner(name, r, cfg, mgr, sandbox, network, st, health)
	announceRestart(ctx, mgr, a.log)
	go a.releaseStartupMemory()
	status := time.NewTicker(channels.StatusEvery)
	defer status.Stop()
	a.writeStatus(deps.Home, mgr)
	defer channels.RemoveStatus(deps.Home, os.Getpid())
	var restarting *errRestart
	for running := true; running; {
		select {
		case <-ctx.Done():
			running = false
		case from := <-restart:
			restarting, running = &errRestart{from: from, mode: cfg.Gateway.RestartMode}, false
			a.log.Info("restarting, as asked", "from", from.String())
		case <-status.C:
			a.writeStatus(deps.Home, mgr)
		case next := <-reloaded:
			r.bus.SetSettings(next.TurnSettings())
			if name == "gateway" { // the gateway owns the schedules: their timing follows the config
				if err := workers.EnsureUpkeep(ctx, r.conn.Client, next); err != nil {
					fmt.Fprintln(a.stdout, "! "+err.Error())
					a.log.Warn("upkeep schedules after a config reload", "error", err)
				}
			}
			a.reloadBanner(cfg, next)
			cfg = next
		}
	}
	if health != nil {
		health.stopping()
	}
	fmt.Fprintln(a.stdout, "stopping…")
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mgr.Stop(stopCtx) // intake first; running activities finish as the workers stop
	if restarting != nil {
		return *restarting // after the deferred closes, run re-executes the binary
	}
	return nil
}

// writeStatus tells `nanobot channels status` what this process runs.
func (a *app) writeStatus(home string, mgr *channels.Manager) {
	if len(mgr.Names()) == 0 {
		return
	}
	host, _ := os.Hostname()
	st := channels.ProcessStatus{PID: os.Getpid(), Host: host, Updated: time.Now().UTC(), Channels: mgr.States()}
	if err := channels.WriteStatus(home, st); err != nil {
		a.log.Warn("channel status file", "error", err)
	}
}

// serveMetrics starts the Prometheus endpoint and routes the client's metrics to it.
func (a *app) serveMetrics(host string, port int) (func(), error) {
	if host == "" {
		host = "127.0.0.1"
	}
	reg := metrics.New()
	addr, stop, err := reg.Serve(net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("gateway.metricsPort: %w", err)
	}
	clientMetrics = reg.Handler()
	fmt.Fprintf(a.stdout, "Metrics:  http://%s/metrics\n", addr)
	return stop, nil
}

// stopTimeout is how long running activities may finish when the process
// stops (NANOBOT_STOP_TIMEOUT_S, default 20); the rest resume on the next start.
func stopTimeout() time.Duration {
	n, err := strconv.Atoi(os.Getenv("NANOBOT_STOP_TIMEOUT_S"))
	if err != nil || n < 0 {
		n = 20
	}
	return time.Duration(n) * time.Second
}

// reloadBanner tells what a reloaded config changed for new turns, and what
// needs a restart.
func (a *app) reloadBanner(old, next *config.Config) {
	fmt.Fprintf(a.stdout, "config reloaded: %s\n", next.Path)
	if o, n := old.ActiveModel().Model, next.ActiveModel().Model; o != n {
		fmt.Fprintf(a.stdout, "Model:    %s (was %s) for new turns\n", n, o)
	}
	if o, n := old.Agents.Defaults.WorkspacePath(), next.Agents.Defaults.WorkspacePath(); o != n {
		fmt.Fprintf(a.stdout, "! workspace changed to %s: restart the gateway to use it\n", n)
	}
	if channelsChanged(old, next) {
		fmt.Fprintln(a.stdout, "! channel settings changed: restart the gateway to apply them")
	}
	if o, n := old.Tools.Exec, next.Tools.Exec; fmt.Sprint(o.SandboxMode(), o.SandboxRoBinds, o.SandboxRwBinds, o.SandboxNetworkOrDefault(), o.SandboxAllowDomains) !=
		fmt.Sprint(n.SandboxMode(), n.SandboxRoBinds, n.SandboxRwBinds, n.SandboxNetworkOrDefault(), n.SandboxAllowDomains) {
		fmt.Fprintln(a.stdout, "! tools.exec sandbox settings changed: restart the gateway to apply them")
	}
}

func channelsChanged(old, next *config.Config) bool {
	a, _ := json.Marshal(old.Channels)
	b, _ := json.Marshal(next.Channels)
	x, _ := json.Marshal(old.API)
	y, _ := json.Marshal(next.API)
	return string(a) != string(b) || string(x) != string(y)
}

// banner tells what this process runs and where to look.
func (a *app) banner(name string, r *runtimeEnv, cfg *config.Config, mgr *channels.Manager, sandbox, network string, st *stores.Set, health *healthServer) {
	how := "external"
	if r.conn.Embedded {
		how = "embedded temporal-dev, started by this process"
	}
	fmt.Fprintf(a.stdout, "🐈 nanobot %s running\n", name)
	fmt.Fprintf(a.stdout, "Temporal: %s (namespace %s, %s)\n", r.conn.Address, r.conn.Namespace, how)
	if r.conn.UIURL != "" {
		fmt.Fprintf(a.stdout, "Web UI:   %s\n", r.conn.UIURL)
	}
	if c, ok := mgr.Get(web.Name); ok {
		if d, ok := c.(Describer); ok {
			fmt.Fprintf(a.stdout, "Chat:     %s\n", d.Describe())
		}
	}
	if len(mgr.Names()) == 0 && name == "gateway" {
		fmt.Fprintln(a.stdout, "Channels: none enabled (talk to it with `nanobot agent`)")
	}
	a.channelLines(mgr)
	if health != nil {
		fmt.Fprintf(a.stdout, "Health:   http://%s/health, /ready\n", health.Addr())
	}
	fmt.Fprintf(a.stdout, "Sandbox:  %s\nNetwork:  %s\n", sandbox, network)
	if st.DB != nil { // the files are the default: said only when it is not them
		fmt.Fprintf(a.stdout, "State:    %s\n", st.Where())
	}
	fmt.Fprintf(a.stdout, "Model:    %s\nWorkspace: %s\nPress Ctrl-C to stop.\n", cfg.ActiveModel().Model, cfg.Agents.Defaults.WorkspacePath())
}

// releaseStartupMemory hands back, once the process is up, the start-up garbage and the pages
// of the binary that only start-up read: an idle gateway's RSS is then mostly its own memory.
func (a *app) releaseStartupMemory() {
	debug.FreeOSMemory()
	if os.Getenv("NANOBOT_DROP_STARTUP_PAGES") == "0" { // make bench's memory rows compare without it
		return
	}
	n := residency.DropExecutablePages(a.log)
	a.log.Debug("released start-up memory", "executable_bytes_advised", n)
}

// sandboxStatus probes the sandbox at start and returns the banner's lines;
// where exec is unsandboxed or refused it also says so at once on w, with
// how to get bubblewrap, and in the log.
func (a *app) sandboxStatus(w io.Writer, cfg *config.Config) (sandbox, network string) {
	sandbox, network, alarm := workers.SandboxState(cfg)
	if !alarm {
		return sandbox, network
	}
	fmt.Fprintf(w, "! %s\n  %s\n", sandbox, workers.BwrapHint)
	a.log.Warn("sandbox", "state", sandbox)
	return "NOT ACTIVE (see above)", network
}

// channelLines name the channels this process runs, each with what it
// tells about itself (the bot it is, where it listens).
func (a *app) channelLines(mgr *channels.Manager) {
	names := mgr.Names()
	if len(names) > 0 {
		fmt.Fprintf(a.stdout, "Channels: %v\n", names)
	}
	for _, n := range names {
		if n == web.Name {
			continue // printed as Chat: above
		}
		if c, ok := mgr.Get(n); ok {
			if d, ok := c.(Describer); ok {
				fmt.Fprintf(a.stdout, "  %s: %s\n", n, d.Describe())
			}
		}
	}
}

// ensureUpkeep registers the dream, idle-compact and heartbeat schedules from the
// config and imports nanobot's cron jobs; the gateway owns them, plain workers leave them alone.
func (a *app) ensureUpkeep(ctx context.Context, name string, r *runtimeEnv, cfg *config.Config) error {
	if name != "gateway" {
		return nil
	}
	if err := workers.EnsureUpkeep(ctx, r.conn.Client, cfg); err != nil {
		return err
	}
	// nanobot's jobs come over once; the renamed file stays as a record.
	store := filepath.Join(cfg.Agents.Defaults.WorkspacePath(), "cron", "jobs.json")
	n, skipped, err := cron.Import(ctx, &cron.Service{Client: r.conn.Client, Instance: cfg.Instance()}, store)
	for _, s := range skipped {
		a.log.Warn("cron job not imported", "job", s)
	}
	if n > 0 {
		a.log.Info("imported nanobot cron jobs", "jobs", n, "from", store)
	}
	return err
}

// flagSet reports whether the command line set the flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
