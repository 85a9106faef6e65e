package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/nanobot-durable/nanobot/config"
)

// Transport kinds, spelled as in config (tools.mcpServers.NAME.type).
const (
	TransportStdio = "stdio"
	TransportSSE   = "sse"
	TransportHTTP  = "streamableHttp"
)

// inheritedEnv is what a stdio server inherits from this process, as the MCP
// SDKs do: enough to find and run the server, none of our secrets.
var inheritedEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

// stderrTailBytes bounds the stderr kept from a stdio server for error messages.
const stderrTailBytes = 4096

// stderrSettle bounds the wait for a failed server's stderr to arrive.
const stderrSettle = 300 * time.Millisecond

// TransportFor resolves the transport of a server the way nanobot does: an
// explicit type wins; otherwise a command means stdio, a URL whose path ends
// in /sse means SSE, and any other URL means streamable HTTP.
func TransportFor(cfg config.MCPServer) (string, error) {
	kind := cfg.Type
	switch kind {
	case TransportStdio, TransportSSE, TransportHTTP:
	case "":
		switch {
		case cfg.Command != "":
			kind = TransportStdio
		case cfg.URL != "" && isSSEURL(cfg.URL):
			kind = TransportSSE
		case cfg.URL != "":
			kind = TransportHTTP
		default:
			return "", errors.New("no command or url configured")
		}
	default:
		return "", fmt.Errorf("unknown transport type %q (want stdio, sse or streamableHttp)", cfg.Type)
	}
	if kind == TransportStdio && cfg.Command == "" {
		return "", errors.New("transport stdio needs a command")
	}
	if kind != TransportStdio && cfg.URL == "" {
		return "", fmt.Errorf("transport %s needs a url", kind)
	}
	return kind, nil
}

// isSSEURL reports whether the URL's path ends in /sse (a query string does
// not hide it, unlike a plain suffix check).
func isSSEURL(raw string) bool {
	p := raw
	if u, err := url.Parse(raw); err == nil {
		p = u.Path
	}
	return strings.HasSuffix(strings.TrimRight(p, "/"), "/sse")
}

// stdioEnv is the minimal inherited environment plus the server's own env.
func stdioEnv(extra map[string]string) []string {
	env := make([]string, 0, len(inheritedEnv)+len(extra))
	for _, k := range inheritedEnv {
		if _, overridden := extra[k]; overridden {
			continue
		}
		if v, ok := os.LookupEnv(k); ok && !strings.HasPrefix(v, "()") {
			env = append(env, k+"="+v)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// newClient builds an unstarted client for cfg; c receives the stdio
// process handle and stderr tail. Long-lived resources (the child process,
// the SSE stream) hang off the pool's context, not the caller's.
func (p *Pool) newClient(name string, cfg config.MCPServer, c *conn, log *slog.Logger) (*mcpclient.Client, error) {
	kind, err := TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	if err := checkAuth(cfg, kind); err != nil {
		return nil, err
	}
	var oauth *transport.OAuthConfig
	if cfg.Auth == AuthOAuth {
		oc, err := oauthConfig(p.home, name, cfg)
		if err != nil {
			return nil, err
		}
		oauth = &oc
	}
	switch kind {
	case TransportStdio:
		c.stderr = &tailBuffer{max: stderrTailBytes}
		t := transport.NewStdioWithOptions(cfg.Command, nil, cfg.Args,
			transport.WithCommandFunc(func(ctx context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
				cmd, err := p.stdioCommand(ctx, cfg, command, args)
				if err != nil {
					return nil, err
				}
				cmd.Env = stdioEnv(cfg.Env)
				c.cmd = cmd
				return cmd, nil
			}),
			transport.WithCommandLogger(log),
			transport.WithCommandStderrWriter(c.stderr))
		return mcpclient.NewClient(t), nil
	case TransportSSE:
		opts := []transport.ClientOption{
			transport.WithHeaders(cfg.Headers),
			transport.WithSSELogger(log),
			transport.WithEndpointTimeout(connectTimeout),
			// The per-call context carries the real deadline (toolTimeout).
			transport.WithResponseTimeout(max(toolTimeout(cfg), connectTimeout) + time.Minute),
		}
		if oauth != nil {
			opts = append(opts, transport.WithOAuth(*oauth))
		}
		t, err := transport.NewSSE(cfg.URL, opts...)
		if err != nil {
			return nil, fmt.Errorf("sse transport: %w", err)
		}
		cl := mcpclient.NewClient(t)
		cl.OnConnectionLost(func(err error) { go p.drop(name, c, fmt.Errorf("sse connection lost: %w", err)) })
		return cl, nil
	default:
		opts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(cfg.Headers), transport.WithHTTPLogger(log)}
		if oauth != nil {
			opts = append(opts, transport.WithHTTPOAuth(*oauth))
		}
		t, err := transport.NewStreamableHTTP(cfg.URL, opts...)
		if err != nil {
			return nil, fmt.Errorf("streamable http transport: %w", err)
		}
		return mcpclient.NewClient(t), nil
	}
}

// stdioCommand starts a stdio server as configured, inside the sandbox when
// it opted in; a sandbox that cannot run stops the server from starting.
func (p *Pool) stdioCommand(ctx context.Context, cfg config.MCPServer, command string, args []string) (*exec.Cmd, error) {
	if !cfg.Sandbox {
		cmd := exec.CommandContext(ctx, command, args...)
		cmd.Dir = cfg.Cwd
		return cmd, nil
	}
	if p.sandbox == nil {
		return nil, errors.New("sandbox is on for this server but no sandbox is configured")
	}
	cmd, err := p.sandbox.Command(ctx, cfg.Cwd, append([]string{command}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("sandbox is on for this server: %w", err)
	}
	return cmd, nil
}

// isTransportFailure tells a broken connection (drop the client) from an
// error the server answered with (keep it).
func isTransportFailure(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) || errors.Is(err, transport.ErrTransportClosed)
}

// tailBuffer keeps the last max bytes written: a stdio server's stderr, so a
// failure can say why the server died.
type tailBuffer struct {
	mu   sync.Mutex
	buf  []byte
	max  int
	last time.Time // of the latest write
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last = time.Now()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// settle waits briefly for a dying server's last words: stderr is copied by
// another goroutine and may trail the stdout EOF that reported the failure.
func (b *tailBuffer) settle() {
	for deadline := time.Now().Add(stderrSettle); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b.mu.Lock()
		quiet := len(b.buf) > 0 && time.Since(b.last) > 30*time.Millisecond
		b.mu.Unlock()
		if quiet {
			return
		}
	}
}

// lastLine is the last non-blank stderr line, shortened for a message.
func (b *tailBuffer) lastLine() string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(b.buf), []byte("\n"))
	line := strings.TrimSpace(string(lines[len(lines)-1]))
	if r := []rune(line); len(r) > 300 {
		line = string(r[:300]) + "…"
	}
	return line
}
