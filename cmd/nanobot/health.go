package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/web"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/mcp"
	"github.com/nanobot-durable/nanobot/secrets"
	"github.com/nanobot-durable/nanobot/stores"
	"github.com/nanobot-durable/nanobot/workers"
)

// healthAddrEnv sets --health-addr for every long-running command (a
// supervisor's unit, a test harness that wants a free port: host:0).
const healthAddrEnv = "NANOBOT_HEALTH_ADDR"

// checkTimeout bounds each readiness check, so a probe gets its answer
// while the thing checked hangs.
const checkTimeout = 3 * time.Second

// healthAddr is where this command serves /health and /ready ("" = off)
// and the setting that chose it, for error messages. --health-addr (or
// NANOBOT_HEALTH_ADDR) wins, "off" turning it off; else the gateway listens on
// gateway.host:gateway.port (0 or less = off). A worker or `serve` listens
// only when asked: it often shares the gateway's config on the same host.
func healthAddr(command string, fs *flag.FlagSet, cfg *config.Config) (addr, key string) {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "health-addr" })
	flagValue := fs.Lookup("health-addr").Value.String()
	switch {
	case set:
		addr, key = flagValue, "--health-addr"
	case flagValue != "":
		addr, key = flagValue, healthAddrEnv
	case command == "gateway" && cfg.Gateway.Port > 0:
		host := cfg.Gateway.Host
		if host == "" {
			host = "127.0.0.1"
		}
		return net.JoinHostPort(host, strconv.Itoa(cfg.Gateway.Port)), "gateway.port (" + cfg.Path + ")"
	default:
		return "", ""
	}
	if addr == "off" {
		return "", ""
	}
	return addr, key
}

// readyCheck is one condition /ready requires, named in its answer.
type readyCheck struct {
	name  string
	check func(context.Context) error
}

// checkResult is one check in /ready's body.
type checkResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// healthServer serves /health (the process is alive) and /ready (it can do
// its work: the checks it was given all pass) for a supervisor or probe.
type healthServer struct {
	srv     *channels.SharedHTTP // the web chat serves here too when it has the same address
	command string
	started time.Time
	redact  *secrets.Set // errors may quote a URL or a token

	mu     sync.RWMutex
	checks []readyCheck
	state  string // "starting", "running" or "stopping"
}

// listenHealth starts the endpoints on addr; key names the setting in the
// error when the address is taken. /ready answers 503 until setChecks. It
// answers to channels.web.allowedHosts: the web chat may be served here too.
func listenHealth(addr, key, command string, cfg *config.Config, redact *secrets.Set, log *slog.Logger) (*healthServer, error) {
	h := &healthServer{command: command, started: time.Now(), redact: redact, state: "starting"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", h.serveHealth)
	mux.HandleFunc("GET /ready", h.serveReady)
	if command == "gateway" { // `nanobot mcp login` sends the browser back here
		mux.Handle("GET "+mcp.OAuthCallbackPath, mcp.CallbackHandler(config.Home(), func() map[string]config.MCPServer {
			if now, _, err := config.Load(cfg.Path); err == nil {
				return now.Tools.MCPServers // a server added since the start can log in too
			}
			return cfg.Tools.MCPServers
		}))
	}
	w, _ := web.ReadConfig(cfg) // checked when the config was loaded
	hosts := channels.Hosts{Allowed: w.AllowedHosts, Setting: "channels.web.allowedHosts"}
	srv, err := channels.ListenShared(addr, mux, hosts, "health endpoints", log)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%s: %s is already in use (another nanobot?): choose another port, or turn the health endpoints off: %w", key, addr, err)
		}
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	h.srv = srv
	return h, nil
}

// Addr is where the endpoints listen ("127.0.0.1:18790").
func (h *healthServer) Addr() string { return h.srv.Addr() }

// setChecks makes /ready run these checks: the process is up.
func (h *healthServer) setChecks(checks []readyCheck) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.checks, h.state = checks, "running"
}

// stopping makes /ready fail from now on: a balancer sends no more work.
func (h *healthServer) stopping() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.state = "stopping"
}

func (h *healthServer) Shutdown(ctx context.Context) error { return h.srv.Shutdown(ctx) }

func (h *healthServer) serveHealth(w http.ResponseWriter, _ *http.Request) {
	h.mu.RLock()
	state := h.state
	h.mu.RUnlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"status": "alive", "state": state, "command": h.command, "pid": os.Getpid(),
		"version": version, "uptimeS": int(time.Since(h.started).Seconds()), "home": homeID(),
	})
}

func (h *healthServer) serveReady(w http.ResponseWriter, r *http.Request) {
	h.mu.RLock()
	checks, state := h.checks, h.state
	h.mu.RUnlock()
	var results []checkResult
	if state != "running" {
		results = []checkResult{{Name: "process", Error: state}}
	} else {
		results = runChecks(r.Context(), checks)
	}
	body := map[string]any{"ready": true, "checks": results}
	status := http.StatusOK
	var failing []string
	for i, c := range results {
		if !c.OK {
			results[i].Error = h.redact.Redact(c.Error)
			failing = append(failing, c.Name)
		}
	}
	if len(failing) > 0 {
		body["ready"], body["failing"], status = false, failing, http.StatusServiceUnavailable
	}
	writeJSON(w, status, body)
}

// runChecks runs every check at once, each bounded by checkTimeout, and
// returns their results in the checks' order.
func runChecks(ctx context.Context, checks []readyCheck) []checkResult {
	results := make([]checkResult, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			results[i] = checkResult{Name: c.name, OK: true}
			if err := c.check(cctx); err != nil {
				results[i] = checkResult{Name: c.name, Error: oneLine(err.Error())}
			}
		})
	}
	wg.Wait()
	return results
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// readyChecks are what this process needs to do its work: Temporal, its own
// pollers on each of its task queues, the channels it was told to run (as
// `nanobot channels status` sees them) and the database when there is one.
func readyChecks(r *runtimeEnv, mgr *channels.Manager, channelNames []string, st *stores.Set) []readyCheck {
	checks := []readyCheck{
		{"temporal", temporalCheck(r.conn.Client)},
		{"workers", workersCheck(r.workers, func(ctx context.Context, q workers.PolledQueue) ([]string, error) {
			return workers.LivePollers(ctx, r.conn.Client, q.Name, q.Type)
		})},
	}
	if len(channelNames) > 0 {
		checks = append(checks, readyCheck{"channels", channelsCheck(mgr, channelNames)})
	}
	if st.DB != nil {
		checks = append(checks, readyCheck{"database", databaseCheck(st.DB.Pool())})
	}
	return checks
}

// temporalCheck asks the frontend's gRPC health service.
func temporalCheck(c client.Client) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			return fmt.Errorf("temporal frontend: %w", err)
		}
		return nil
	}
}

// pollerSet is what the workers check needs of a workers.Set.
type pollerSet interface {
	Err() error
	Polled() []workers.PolledQueue
	Identity() string
}

// workersCheck passes when no worker stopped on a fatal error and the
// server lists this process's pollers on every queue it polls.
func workersCheck(set pollerSet, live func(context.Context, workers.PolledQueue) ([]string, error)) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := set.Err(); err != nil {
			return fmt.Errorf("a worker stopped: %w", err)
		}
		var missing []string
		for _, q := range set.Polled() {
			ids, err := live(ctx, q)
			if err != nil {
				return err
			}
			ours := set.Identity()
			if (ours == "" && len(ids) > 0) || slices.Contains(ids, ours) {
				continue // an SDK-chosen identity cannot be told apart: any live poller counts
			}
			missing = append(missing, q.Name+" ("+strings.ToLower(strings.TrimPrefix(q.Type.String(), "TASK_QUEUE_TYPE_"))+")")
		}
		if len(missing) > 0 {
			return fmt.Errorf("the server sees no poller of this process on %s", strings.Join(missing, ", "))
		}
		return nil
	}
}

// channelsCheck passes while every channel named runs and, when it can
// tell, holds its platform's connection.
func channelsCheck(mgr *channels.Manager, names []string) func(context.Context) error {
	return func(context.Context) error {
		if down := channels.NotReady(names, mgr.States()); len(down) > 0 {
			return errors.New(strings.Join(down, "; "))
		}
		return nil
	}
}

// pinger is a database connection pool.
type pinger interface{ Ping(context.Context) error }

func databaseCheck(db pinger) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := db.Ping(ctx); err != nil {
			return fmt.Errorf("database: %w", err)
		}
		return nil
	}
}

// homeID names this process's nanobot home without showing its path, so a
// command can tell its own gateway from another's on the same port.
func homeID() string {
	sum := sha256.Sum256([]byte(config.Home()))
	return hex.EncodeToString(sum[:8])
}
