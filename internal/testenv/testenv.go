// Package testenv starts the real pieces integration tests run against: a
// temporal-dev server on its own port, the nanobot binary, and a
// temporary HOME with a config. Nothing here touches ~/.nanobot or 7233.
package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// RepoRoot finds the module root from the test's working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/nanobot-durable/nanobot\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testenv: module root not found")
		}
		dir = parent
	}
}

// FreePort asks the OS for a free port on 127.0.0.1.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// DevServerBin is bin/temporal-dev (or TEMPORAL_DEV_BIN); `make test` builds it.
func DevServerBin(t testing.TB) string {
	t.Helper()
	p := os.Getenv("TEMPORAL_DEV_BIN")
	if p == "" {
		p = filepath.Join(RepoRoot(t), "bin", "temporal-dev")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("testenv: %s is missing: run `make temporal-dev` (or `make test`)", p)
	}
	return p
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// NanobotBin is NANOBOT_BIN, or a fresh build of ./cmd/nanobot (cached by go build).
func NanobotBin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("NANOBOT_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "nanobot-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "nanobot")
		// goolm as make builds it: the Matrix channel's end-to-end encryption
		cmd := exec.Command("go", "build", "-tags", "goolm", "-o", builtBin, "./cmd/nanobot")
		cmd.Dir = RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build nanobot: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// DevServer is a running temporal-dev.
type DevServer struct {
	Addr   string
	Client client.Client
	// DBFile is its SQLite file when it has one (StartRunDevServer).
	DBFile string
	// Ready is when it first answered a health check.
	Ready time.Time
	cmd   *exec.Cmd
	done  chan struct{}
}

// StartDevServer runs temporal-dev on a free port with an in-memory
// database; it stops when the test ends. A port taken between FreePort and
// the server's bind (other test processes pick ports too) is retried on new ports.
func StartDevServer(t testing.TB, extra ...string) *DevServer {
	t.Helper()
	return startOnFreePort(t, append(nanobotSearchAttributes(), extra...))
}

// StartRunDevServer is temporal-dev as `make run` starts it: a SQLite file database (WAL) in a
// directory of its own, the Web UI on, nanobot's search attributes; extra flags come last.
func StartRunDevServer(t testing.TB, extra ...string) *DevServer {
	t.Helper()
	db := filepath.Join(t.TempDir(), "temporal.db")
	args := []string{"--db-filename", db, "--headless=false", "--ui-port", strconv.Itoa(FreePort(t))}
	s := StartDevServer(t, append(args, extra...)...)
	s.DBFile = db
	return s
}

// StartBareDevServer is StartDevServer without nanobot's search attributes:
// an external cluster where `nanobot setup-temporal` never ran.
func StartBareDevServer(t testing.TB, extra ...string) *DevServer {
	t.Helper()
	return startOnFreePort(t, extra)
}

// nanobotSearchAttributes are the flags that register nanobot's search attributes.
func nanobotSearchAttributes() []string {
	return []string{"--search-attribute", "NanobotSessionKey=Keyword", "--search-attribute", "NanobotChannel=Keyword"}
}

func startOnFreePort(t testing.TB, extra []string) *DevServer {
	t.Helper()
	for attempt := 1; ; attempt++ {
		s, logs, err := startDevServer(t, FreePort(t), extra)
		if err == nil {
			return s
		}
		if attempt < 3 && strings.Contains(logs, "address already in use") {
			t.Logf("temporal-dev: a port was taken, retrying on new ports")
			continue
		}
		t.Fatalf("%v:\n%s", err, logs)
	}
}

// StartDevServerOn is StartDevServer on a given port: a restart of a
// server on its database file (--db-filename) comes back where clients
// and workers look for it.
func StartDevServerOn(t testing.TB, port int, extra ...string) *DevServer {
	t.Helper()
	s, logs, err := startDevServer(t, port, append(nanobotSearchAttributes(), extra...))
	if err != nil {
		t.Fatalf("%v:\n%s", err, logs)
	}
	return s
}

// Pid is the server process's id.
func (s *DevServer) Pid() int { return s.cmd.Process.Pid }

// Stop ends the server (SIGTERM, then SIGKILL after 10 s) and closes its client.
func (s *DevServer) Stop() {
	if s.Client != nil {
		s.Client.Close()
		s.Client = nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Kill ends the server with SIGKILL, as a crash would, and closes its client.
func (s *DevServer) Kill() {
	if s.Client != nil {
		s.Client.Close()
		s.Client = nil
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

func startDevServer(t testing.TB, port int, extra []string) (*DevServer, string, error) {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--headless", "--log-level", "error"}, extra...)
	cmd := exec.Command(DevServerBin(t), args...)
	logs := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start temporal-dev: %w", err)
	}
	s := &DevServer{Addr: addr, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return nil, logs.String(), errors.New("temporal-dev exited early")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: quietLogger()})
		if err == nil {
			if _, err = c.CheckHealth(ctx, &client.CheckHealthRequest{}); err == nil {
				cancel()
				s.Client, s.Ready = c, time.Now()
				return s, "", nil
			}
			c.Close()
		}
		cancel()
		time.Sleep(200 * time.Millisecond)
	}
	return nil, logs.String(), fmt.Errorf("temporal-dev on %s did not become healthy", addr)
}

// SyncBuffer collects a process's output while the test may read it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *SyncBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *SyncBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func quietLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
}

// Home is a temporary HOME with a nanobot config.
type Home struct {
	Dir        string
	ConfigPath string
	Workspace  string
}

// NewHome writes config.json with an OpenAI-compatible provider at baseURL.
func NewHome(t testing.TB, baseURL string, extra map[string]any) *Home {
	t.Helper()
	dir := t.TempDir()
	h := &Home{Dir: dir, ConfigPath: filepath.Join(dir, ".nanobot", "config.json"), Workspace: filepath.Join(dir, "workspace")}
	cfg := map[string]any{
		"agents": map[string]any{"defaults": map[string]any{
			"workspace": h.Workspace, "model": "test-model", "provider": "custom", "maxTokens": 1024,
		}},
		"providers": map[string]any{"custom": map[string]any{"apiKey": "test-key", "apiBase": baseURL}},
	}
	for k, v := range extra {
		cfg[k] = v
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(h.ConfigPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(h.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.ConfigPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// Env is the environment for a nanobot subprocess: this HOME, this Temporal,
// /health and /ready on a port of the OS's choosing (the banner's Health: line).
func (h *Home) Env(temporalAddr string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "NANOBOT_CONFIG" || k == "TEMPORAL_ADDRESS" || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "NANOBOT_") {
			continue
		}
		env = append(env, kv)
	}
	// Health endpoints on a free port: gateway.port's default would collide between tests.
	env = append(env, "HOME="+h.Dir, "TEMPORAL_ADDRESS="+temporalAddr, "NANOBOT_HEALTH_ADDR=127.0.0.1:0")
	return append(env, extra...)
}

// Settings are a test's turn settings: what it leaves at zero comes from
// the config's defaults (config.TurnSettings); Stream stays as given.
func Settings(s protocol.Settings) protocol.Settings {
	d := config.Default().TurnSettings()
	fill := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&s.MaxIterations, d.MaxIterations)
	fill(&s.MaxTokens, d.MaxTokens)
	fill(&s.ContextWindowTokens, d.ContextWindowTokens)
	fill(&s.MaxRepeatedToolCalls, d.MaxRepeatedToolCalls)
	for _, f := range []struct{ v, def *time.Duration }{
		{&s.LLMTimeout, &d.LLMTimeout}, {&s.LLMHeartbeat, &d.LLMHeartbeat}, {&s.ToolTimeout, &d.ToolTimeout}, {&s.ApprovalTimeout, &d.ApprovalTimeout},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if s.LLMMaxAttempts == 0 {
		s.LLMMaxAttempts = d.LLMMaxAttempts
	}
	if s.ConsolidationRatio == 0 {
		s.ConsolidationRatio = d.ConsolidationRatio
	}
	if s.Model == "" {
		s.Model = d.Model
	}
	return s
}

// WriteFile writes text to dir/rel (a slash path), making its folders.
func WriteFile(t testing.TB, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
