package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/diskgc"
	"github.com/nanobot-durable/nanobot/internal/hostcheck"
)

// devReadyPrefix starts the line temporal-dev prints once its frontend serves the namespaces.
const devReadyPrefix = "temporal-dev: server "

// devServer is a temporal-dev child process we started and must stop.
type devServer struct {
	cmd   *exec.Cmd
	done  chan error
	ready chan struct{} // closed when the child printed its ready line
	log   string        // where its output goes
}

// temporalConn is a dialed Temporal plus what to tell the user about it.
type temporalConn struct {
	Client    client.Client
	Address   string
	Namespace string
	UIURL     string
	Embedded  bool // we started temporal-dev ourselves
	dev       *devServer
}

// Close closes the client and stops the child server, if any.
func (t *temporalConn) Close() {
	t.Client.Close()
	if t.dev != nil {
		t.dev.stop()
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// devPorts are the embedded default's ports; NANOBOT_DEV_PORT and
// NANOBOT_DEV_UI_PORT move them (tests must never touch 7233).
func devPorts() (int, int) {
	port, _ := strconv.Atoi(envOr("NANOBOT_DEV_PORT", "7233"))
	ui, _ := strconv.Atoi(envOr("NANOBOT_DEV_UI_PORT", strconv.Itoa(port+1000)))
	return port, ui
}

// connectTemporal dials TEMPORAL_ADDRESS, or the embedded default on
// 127.0.0.1, starting temporal-dev as a supervised child when nothing answers
// (its database in the config's home, its retention from retention.temporalDays).
func connectTemporal(ctx context.Context, cfg *config.Config, log *slog.Logger) (*temporalConn, error) {
	ns := envOr("TEMPORAL_NAMESPACE", "default")
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		c, err := dial(ctx, addr, ns, log, 15*time.Second)
		if err != nil {
			return nil, fmt.Errorf("cannot reach Temporal at %s (TEMPORAL_ADDRESS): %w", addr, err)
		}
		return &temporalConn{Client: c, Address: addr, Namespace: ns, UIURL: os.Getenv("TEMPORAL_UI_URL")}, nil
	}
	port, uiPort := devPorts()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ui := fmt.Sprintf("http://127.0.0.1:%d", uiPort)
	if answers(addr) {
		c, err := dial(ctx, addr, ns, log, 10*time.Second)
		if err == nil {
			return &temporalConn{Client: c, Address: addr, Namespace: ns, UIURL: ui}, nil
		}
		return nil, fmt.Errorf("something listens on %s but is not a Temporal server: %w", addr, err)
	}
	if sec, err := temporalSecurityFromEnv(os.Getenv); err != nil {
		return nil, err
	} else if sec.TLS != nil {
		return nil, fmt.Errorf("%s is set (TLS), %w", sec.Why, errEmbeddedPlaintext)
	}
	dev, err := startDevServer(config.ConfigDir(cfg.Path), port, uiPort, ns, embeddedRetention(cfg), log)
	if err != nil {
		return nil, err
	}
	c, err := waitHealthy(ctx, dev, addr, ns, log)
	if err != nil {
		dev.stop()
		return nil, err
	}
	return &temporalConn{Client: c, Address: addr, Namespace: ns, UIURL: ui, Embedded: true, dev: dev}, nil
}

func answers(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// clientMetrics, when set (gateway.metricsPort), receives the SDK's and nanobot's metrics.
var clientMetrics client.MetricsHandler

// dial is every process's one way to Temporal: TEMPORAL_TLS_* and TEMPORAL_API_KEY apply to all.
func dial(ctx context.Context, addr, ns string, log *slog.Logger, wait time.Duration) (client.Client, error) {
	sec, err := temporalSecurityFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	c, err := client.DialContext(dctx, sec.clientOptions(clientOptions(addr, ns, log)))
	if err != nil {
		return nil, sec.explain(err, addr)
	}
	if _, err := c.CheckHealth(dctx, &client.CheckHealthRequest{}); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// clientOptions are every process's Temporal client options before TLS and keys.
func clientOptions(addr, ns string, log *slog.Logger) client.Options {
	opts := client.Options{HostPort: addr, Namespace: ns, Logger: sdklog.NewStructuredLogger(log), MetricsHandler: clientMetrics}
	if hostcheck.Loopback(addr) { // gzip costs CPU on both ends of every call and saves nothing on this machine
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	return opts
}

// findDevServer looks next to this binary, in ./bin, then on PATH.
func findDevServer() (string, error) {
	var tried []string
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "temporal-dev")
		tried = append(tried, p)
		if isExecutable(p) {
			return p, nil
		}
	}
	p, _ := filepath.Abs(filepath.Join("bin", "temporal-dev"))
	tried = append(tried, p)
	if isExecutable(p) {
		return p, nil
	}
	if p, err := exec.LookPath("temporal-dev"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no Temporal server at 127.0.0.1 and temporal-dev not found (looked at %v and on PATH): run `make temporal-dev`, or set TEMPORAL_ADDRESS", tried)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// embeddedRetention is the namespace retention the embedded server is
// started with: retention.temporalDays (0 keeps the server's least, an hour).
func embeddedRetention(cfg *config.Config) time.Duration {
	return max(cfg.Retention.Ages().Temporal, time.Hour)
}

func startDevServer(configDir string, port, uiPort int, ns string, retention time.Duration, log *slog.Logger) (*devServer, error) {
	bin, err := findDevServer()
	if err != nil {
		return nil, err
	}
	dbFile := diskgc.EmbeddedTemporalDB(configDir)
	dir := filepath.Dir(dbFile)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	logFile, err := os.OpenFile(filepath.Join(dir, "temporal-dev.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open temporal-dev log: %w", err)
	}
	cmd := exec.Command(bin,
		"--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--ui-port", strconv.Itoa(uiPort),
		"--db-filename", dbFile, "--namespace", ns, "--namespace-retention", retention.String(),
		"--search-attribute", "NanobotSessionKey=Keyword", "--search-attribute", "NanobotChannel=Keyword")
	// Its stdout passes through us to the log, so the ready line is seen the moment it is printed.
	outR, outW, err := os.Pipe()
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("pipe for temporal-dev output: %w", err)
	}
	cmd.Stdout, cmd.Stderr = outW, logFile
	// The child dies with us even when we are killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	err = cmd.Start()
	outW.Close()
	if err != nil {
		outR.Close()
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	log.Info("started embedded Temporal server", "bin", bin, "pid", cmd.Process.Pid, "log", logFile.Name())
	d := &devServer{cmd: cmd, done: make(chan error, 1), ready: make(chan struct{}), log: logFile.Name()}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		d.copyOutput(outR, logFile)
	}()
	go func() {
		err := cmd.Wait()
		<-copied
		logFile.Close()
		d.done <- err
	}()
	return d, nil
}

// copyOutput writes the child's stdout to its log line by line and closes ready at the ready line.
func (d *devServer) copyOutput(out io.ReadCloser, logFile io.Writer) {
	defer out.Close()
	sc := bufio.NewScanner(out)
	seen := false
	for sc.Scan() {
		line := sc.Text()
		_, _ = fmt.Fprintln(logFile, line)
		if !seen && strings.HasPrefix(line, devReadyPrefix) {
			seen = true
			close(d.ready)
		}
	}
	_, _ = io.Copy(logFile, out) // a line too long for the scanner: keep the rest anyway
}

// waitHealthy dials the child once it prints its ready line; if it exits early because
// another process took the port first, that server is used instead.
func waitHealthy(ctx context.Context, dev *devServer, addr, ns string, log *slog.Logger) (client.Client, error) {
	timeout := time.NewTimer(90 * time.Second)
	defer timeout.Stop()
	select {
	case <-dev.ready:
		c, err := dial(ctx, addr, ns, log, 10*time.Second)
		if err != nil {
			return nil, fmt.Errorf("temporal-dev said it was ready but does not answer on %s: %w (log: %s)", addr, err, dev.log)
		}
		return c, nil
	case err := <-dev.done:
		dev.done <- err
		if answers(addr) {
			if c, derr := dial(ctx, addr, ns, log, 10*time.Second); derr == nil {
				dev.cmd = nil
				return c, nil
			}
		}
		return nil, fmt.Errorf("temporal-dev exited before it was ready (%v): %s (log: %s)", err, lastLogLine(dev.log), dev.log)
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timeout.C:
		return nil, fmt.Errorf("temporal-dev did not become healthy within 90s: see %s", dev.log)
	}
}

// lastLogLine is the last non-empty line of the dev server's log, trimmed:
// why it stopped, in one line.
func lastLogLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "no log"
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return "nothing in its log"
	}
	if r := []rune(last); len(r) > 300 {
		last = string(r[:300]) + "…"
	}
	return last
}

func (d *devServer) stop() {
	if d == nil || d.cmd == nil || d.cmd.Process == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	}
}
