// Package mcp is the MCP client side: it connects to the configured MCP
// servers (stdio, SSE, streamable HTTP) and offers their tools to the model
// as mcp_<server>_<tool>, their resources as mcp_<server>_resource_<name>
// and their prompts as mcp_<server>_prompt_<name>, as nanobot does. Clients are pooled per worker process and connect
// lazily; a server that fails is reported and retried later, never failing
// the turn.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/tools"
)

const (
	// DefaultToolTimeout is nanobot's toolTimeout when the config has none.
	DefaultToolTimeout = 30 * time.Second
	// connectTimeout bounds starting a server and the initialize handshake.
	connectTimeout = 30 * time.Second
	// closeTimeout bounds Close: a stdio server gets stdin EOF, then SIGTERM.
	closeTimeout = 10 * time.Second
)

// clientInfo identifies us to servers.
var clientInfo = mcpgo.Implementation{Name: "nanobot", Version: "1.0.0"}

var errPoolClosed = errors.New("MCP pool is closed")

// Pool holds one client per configured server, connected on first use.
// It is safe for concurrent use.
type Pool struct {
	log     *slog.Logger
	ctx     context.Context // lives until Close: stdio children and SSE streams hang off it
	cancel  context.CancelFunc
	closed  atomic.Bool
	servers map[string]*server
	names   []string // server names, sorted
	// sandbox runs the stdio servers that opt in (tools.mcpServers.NAME.sandbox).
	sandbox *tools.Sandbox
	// home is nanobot's folder, where OAuth credentials are (CredentialsFile).
	home string

	// backoff is the delay before retrying a server that failed to connect;
	// it doubles per consecutive failure up to maxBackoff.
	backoff, maxBackoff time.Duration

	regMu      sync.Mutex
	registered map[*tools.Registry]map[string]regEntry
}

type server struct {
	name string
	cfg  config.MCPServer
	log  *slog.Logger

	mu       sync.Mutex // serializes connecting and listing
	conn     *conn
	lastErr  error
	failures int
	retryAt  time.Time
}

// conn is one live client of a server.
type conn struct {
	client     *mcpclient.Client
	cmd        *exec.Cmd   // stdio only
	stderr     *tailBuffer // stdio only
	stale      atomic.Bool // tools/list_changed seen since the last listing
	tools      []mcpgo.Tool
	resources  []mcpgo.Resource // listed with the tools when enabledTools allows all
	prompts    []mcpgo.Prompt
	skipped    *skippedToolsError // definitions of the last listing that could not be read
	listed     bool
	stopListen func() // ends a subscriptions/listen stream (modern protocol)
	closeOnce  sync.Once
}

type regEntry struct{ server, fingerprint string }

// NewPool prepares clients for servers; nothing connects until Tools,
// Register or a tool call needs it.
func NewPool(servers map[string]config.MCPServer, log *slog.Logger) *Pool {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{
		log: log, ctx: ctx, cancel: cancel, home: config.Home(),
		servers:    make(map[string]*server, len(servers)),
		backoff:    2 * time.Second,
		maxBackoff: time.Minute,
		registered: map[*tools.Registry]map[string]regEntry{},
	}
	for name, cfg := range servers {
		p.servers[name] = &server{name: name, cfg: cfg, log: log.With("mcp_server", name)}
		p.names = append(p.names, name)
	}
	sort.Strings(p.names)
	return p
}

// SetSandbox is the bwrap layout for servers with "sandbox": true; call it
// before the first connection. Without one such servers do not start. The
// pool closes it (its network proxy) when it closes: it is the worker's last user.
func (p *Pool) SetSandbox(sb *tools.Sandbox) { p.sandbox = sb }

// Tools connects every server not yet connected, lists its tools (again
// only after a tools/list_changed) and wraps those enabledTools allows.
// A server that fails is reported in the errors and retried on a later call.
func (p *Pool) Tools(ctx context.Context) ([]tools.Tool, []error) {
	listed, errs := p.list(ctx)
	wrapped, werrs := p.wrap(listed)
	out := make([]tools.Tool, len(wrapped))
	for i, t := range wrapped {
		out[i] = t
	}
	return out, append(errs, werrs...)
}

// Register makes reg hold the current MCP tools, as external tools: new
// ones are added, changed ones replaced, and ones a server no longer lists
// removed. Tools of a server that failed this time stay, so a passing
// outage neither fails the turn nor churns the prompt.
func (p *Pool) Register(ctx context.Context, reg *tools.Registry) []error {
	p.regMu.Lock() // one refresh at a time, so an older listing never wins
	defer p.regMu.Unlock()
	listed, errs := p.list(ctx)
	wrapped, werrs := p.wrap(listed)
	errs = append(errs, werrs...)

	have := p.registered[reg]
	if have == nil {
		have = map[string]regEntry{}
		p.registered[reg] = have
	}
	seen := make(map[string]bool, len(wrapped))
	for _, t := range wrapped {
		seen[t.name] = true
		fp := t.fingerprint()
		if e, ok := have[t.name]; ok {
			if e.fingerprint == fp {
				continue
			}
			reg.Unregister(t.name)
			delete(have, t.name)
		}
		if err := reg.TryRegister(t, tools.External()); err != nil {
			errs = append(errs, fmt.Errorf("mcp server %q: %w", t.server, err))
			continue
		}
		have[t.name] = regEntry{server: t.server, fingerprint: fp}
	}
	for name, e := range have {
		if _, ok := listed[e.server]; ok && !seen[name] {
			reg.Unregister(name)
			delete(have, name)
		}
	}
	return errs
}

// Close disconnects every server and stops stdio children; tools called
// afterwards return an error result.
func (p *Pool) Close() {
	if p.closed.Swap(true) {
		return
	}
	var wg sync.WaitGroup
	for _, s := range p.servers {
		wg.Go(func() {
			s.mu.Lock() // waits for a connect in progress, which then sees closed
			c := s.conn
			s.conn = nil
			s.mu.Unlock()
			if c != nil {
				c.close(s.log)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeTimeout):
		p.log.Warn("mcp: servers still closing; killing them")
	}
	p.cancel() // kills stdio children that ignored stdin EOF and SIGTERM
	if p.sandbox != nil {
		_ = p.sandbox.Close()
	}
}

// listing is what one server offers: its tools, and its resources and
// prompts when enabledTools allows them.
type listing struct {
	tools     []mcpgo.Tool
	resources []mcpgo.Resource
	prompts   []mcpgo.Prompt
}

// list fetches the definitions of every server in parallel.
func (p *Pool) list(ctx context.Context) (map[string]listing, []error) {
	type outcome struct {
		defs listing
		err  error
	}
	results := make([]outcome, len(p.names))
	var wg sync.WaitGroup
	for i, name := range p.names {
		wg.Go(func() {
			defs, err := p.serverTools(ctx, p.servers[name])
			results[i] = outcome{defs, err}
		})
	}
	wg.Wait()
	listed := map[string]listing{}
	var errs []error
	for i, name := range p.names {
		err := results[i].err
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp server %q: %w", name, err))
		}
		if err != nil && !errors.As(err, new(*skippedToolsError)) {
			continue
		}
		listed[name] = results[i].defs
	}
	return listed, errs
}

// serverTools returns the server's definitions, listing them again only
// when the server said they changed (or never listed them).
func (p *Pool) serverTools(ctx context.Context, s *server) (listing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := p.connectLocked(ctx, s)
	if err != nil {
		return listing{}, err
	}
	if c.listed && !c.stale.Load() {
		return c.listing(), c.skippedErr()
	}
	c.stale.Store(false) // before listing, so a change during it is not lost
	lctx, cancel := context.WithTimeout(ctx, toolTimeout(s.cfg))
	defer cancel()
	var defs []mcpgo.Tool
	if offersTools(c.client.GetServerCapabilities()) {
		var res *mcpgo.ListToolsResult
		res, err = c.client.ListTools(lctx, mcpgo.ListToolsRequest{})
		if err == nil {
			defs = res.Tools
		} else if isDecodeFailure(err) {
			defs, err = listToolsLenient(lctx, c.client)
		}
	}
	var skipped *skippedToolsError
	if err != nil && !errors.As(err, &skipped) {
		if isTransportFailure(err) && ctx.Err() == nil {
			p.dropLocked(s, c, err)
		}
		c.listed = false
		return listing{}, fmt.Errorf("list tools: %w", withStderr(err, c))
	}
	c.tools, c.listed, c.skipped = defs, true, skipped
	c.resources, c.prompts = nil, nil
	if extrasEnabled(s.cfg.EnabledTools) {
		c.resources, c.prompts = listExtras(lctx, c, s.log)
	} else {
		s.log.Debug("mcp: skipping resources and prompts (enabledTools does not include '*': only tools allowed)")
	}
	s.log.Debug("mcp: listed", "tools", len(defs), "resources", len(c.resources), "prompts", len(c.prompts))
	if skipped != nil {
		s.log.Warn("mcp: server listed tools that cannot be read; offering the others", "err", skipped)
	}
	return c.listing(), c.skippedErr()
}

func (c *conn) listing() listing {
	return listing{tools: c.tools, resources: c.resources, prompts: c.prompts}
}

// skippedErr is the last listing's unreadable tools, as a nil error when none.
func (c *conn) skippedErr() error {
	if c.skipped == nil {
		return nil
	}
	return c.skipped
}

// call runs one tools/call, resources/read or prompts/get under the
// server's toolTimeout; every failure is an error result for the model.
func (p *Pool) call(ctx context.Context, t *Tool, args map[string]any) tools.Result {
	s, ok := p.servers[t.server]
	if !ok {
		return tools.ErrorResult("Error: MCP server '%s' is not configured", t.server)
	}
	timeout := toolTimeout(s.cfg)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	s.mu.Lock()
	c, err := p.connectLocked(cctx, s)
	s.mu.Unlock()
	if err != nil {
		return tools.ErrorResult("Error: MCP server '%s' is unavailable: %v", t.server, err)
	}
	var res tools.Result
	switch t.kind {
	case kindResource:
		res, err = readResource(cctx, c, t.raw)
	case kindPrompt:
		res, err = getPrompt(cctx, c, t.raw, args)
	default:
		res, err = runServerTool(cctx, c, t.raw, args)
	}
	switch {
	case err == nil:
		return res
	case ctx.Err() != nil:
		return tools.ErrorResult("Error: MCP %s call was cancelled: %v", t.kind, ctx.Err())
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		s.log.Warn("mcp: call timed out", "tool", t.name, "timeout", timeout)
		return tools.ErrorResult("Error: MCP %s call timed out after %s", t.kind, timeout)
	case isDecodeFailure(err):
		s.log.Warn("mcp: reply cannot be read", "tool", t.name, "err", err)
		return tools.ErrorResult("Error: MCP server '%s' sent a reply to %s '%s' that cannot be read: %s", t.server, t.kind, t.raw, describeDecodeError(err))
	case mcpclient.IsOAuthAuthorizationRequiredError(err):
		s.log.Warn("mcp: OAuth token expired and cannot be refreshed", "tool", t.name, "err", err)
		return tools.ErrorResult("Error: MCP server '%s' needs a new OAuth login: run `nanobot mcp login %s`", t.server, t.server)
	case isTransportFailure(err):
		err = withStderr(err, c)
		s.mu.Lock()
		p.dropLocked(s, c, err)
		s.mu.Unlock()
		return tools.ErrorResult("Error: MCP server '%s' failed: %v (reconnecting on the next call)", t.server, err)
	default:
		return tools.ErrorResult("Error: MCP %s '%s' failed: %v", t.kind, t.raw, err)
	}
}

// connectLocked returns the server's live client, connecting it if needed;
// after a failure it waits out the backoff instead of hammering the server.
func (p *Pool) connectLocked(ctx context.Context, s *server) (*conn, error) {
	if p.closed.Load() {
		return nil, errPoolClosed
	}
	if s.conn != nil {
		return s.conn, nil
	}
	loggedInSince := errors.Is(s.lastErr, errNeedsLogin) && LoggedIn(p.home, s.name, s.cfg.URL)
	if wait := time.Until(s.retryAt); wait > 0 && !loggedInSince { // a login since the failure is worth a try at once
		return nil, fmt.Errorf("%w (next retry in %s)", s.lastErr, wait.Round(100*time.Millisecond))
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	c, err := p.dial(cctx, s)
	if err != nil && ctx.Err() != nil {
		return nil, err // the caller gave up; that says nothing about the server
	}
	if err != nil {
		s.failures++
		delay := min(p.backoff<<min(s.failures-1, 16), p.maxBackoff)
		s.lastErr, s.retryAt = err, time.Now().Add(delay)
		s.log.Warn("mcp: connect failed", "err", err, "retry_in", delay)
		return nil, err
	}
	s.conn, s.failures, s.lastErr, s.retryAt = c, 0, nil, time.Time{}
	return c, nil
}

// dial starts a client and performs the handshake.
func (p *Pool) dial(ctx context.Context, s *server) (*conn, error) {
	c := &conn{}
	cl, err := p.newClient(s.name, s.cfg, c, s.log)
	if err != nil {
		return nil, err
	}
	c.client = cl
	// Notifications may come at any time, even before the initialize
	// response; the handler runs on the transport's reader, so it must
	// never block (no locks).
	cl.OnNotification(func(n mcpgo.JSONRPCNotification) {
		switch n.Method {
		case mcpgo.MethodNotificationToolsListChanged, mcpgo.MethodNotificationResourcesListChanged, mcpgo.MethodNotificationPromptsListChanged:
			c.stale.Store(true)
			s.log.Debug("mcp: notification", "method", n.Method)
		case string(mcpgo.MethodNotificationMessage): // the server's own log
			f := n.Params.AdditionalFields
			s.log.Debug("mcp: notification", "method", n.Method, "level", f["level"], "data", f["data"])
		default: // progress and the rest: accepted, nothing to do
			s.log.Debug("mcp: notification", "method", n.Method)
		}
	})
	if err := cl.Start(p.ctx); err != nil {
		err = withLoginHint(err, s.name)
		err = withStderr(err, c) // before close, which cuts the stderr pipe
		c.close(s.log)
		return nil, fmt.Errorf("start: %w", err)
	}
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = clientInfo
	res, err := cl.Initialize(ctx, init)
	if err != nil {
		err = withLoginHint(err, s.name)
		err = withStderr(err, c)
		c.close(s.log)
		return nil, fmt.Errorf("initialize: %w", err)
	}
	// Protocol 2026-07-28 delivers list_changed only on a subscription.
	caps := res.Capabilities
	filter := mcpgo.SubscriptionFilter{
		ToolsListChanged:     caps.Tools != nil && caps.Tools.ListChanged,
		ResourcesListChanged: caps.Resources != nil && caps.Resources.ListChanged && extrasEnabled(s.cfg.EnabledTools),
		PromptsListChanged:   caps.Prompts != nil && caps.Prompts.ListChanged && extrasEnabled(s.cfg.EnabledTools),
	}
	if mcpgo.IsModernProtocol(res.ProtocolVersion) && !filter.IsEmpty() {
		stop, err := cl.ListenAsync(p.ctx, filter, func(err error) {
			s.log.Debug("mcp: subscription ended", "err", err)
		})
		if err == nil {
			c.stopListen = stop
		}
	}
	s.log.Info("mcp: connected", "server_name", res.ServerInfo.Name, "protocol", res.ProtocolVersion)
	return c, nil
}

// drop forgets a broken client (if it is still the current one) so the next
// use reconnects; closing happens in the background.
func (p *Pool) drop(name string, c *conn, cause error) {
	s, ok := p.servers[name]
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p.dropLocked(s, c, cause)
}

func (p *Pool) dropLocked(s *server, c *conn, cause error) {
	if s.conn != c {
		return
	}
	s.conn = nil
	s.log.Warn("mcp: server connection lost; reconnecting on next use", "err", cause)
	go c.close(s.log)
}

func (c *conn) close(log *slog.Logger) {
	c.closeOnce.Do(func() {
		if c.stopListen != nil {
			c.stopListen()
		}
		if err := c.client.Close(); err != nil {
			log.Debug("mcp: close", "err", err)
		}
	})
}

// withStderr adds the server's last stderr line, which usually says why a
// stdio server failed.
func withStderr(err error, c *conn) error {
	if c.stderr == nil {
		return err
	}
	if isTransportFailure(err) {
		c.stderr.settle()
	}
	if line := c.stderr.lastLine(); line != "" {
		return fmt.Errorf("%w (last stderr line: %s)", err, line)
	}
	return err
}

func toolTimeout(cfg config.MCPServer) time.Duration {
	if cfg.ToolTimeout > 0 {
		return time.Duration(cfg.ToolTimeout) * time.Second
	}
	return DefaultToolTimeout
}
