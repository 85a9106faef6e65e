package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/cliapps"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/mcp"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/transcription"
	"github.com/nanobot-durable/nanobot/workers"
)

// status prints where things are and whether Temporal answers; it starts nothing.
func (a *app) status(ctx context.Context, args []string) error {
	fs := a.flags("status")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	out := a.stdout
	exists := "missing: run nanobot onboard"
	if cfg.Exists {
		exists = "found"
	}
	fmt.Fprintf(out, "Config:    %s (%s)\n", cfg.Path, exists)
	ws := cfg.Agents.Defaults.WorkspacePath()
	wsState := "missing: run nanobot onboard"
	if st, err := os.Stat(ws); err == nil && st.IsDir() {
		wsState = "found"
	}
	fmt.Fprintf(out, "Workspace: %s (%s)\n", ws, wsState)
	fmt.Fprintf(out, "State:     %s\n", a.stateLine(ctx, cfg))
	m := cfg.ActiveModel()
	fmt.Fprintf(out, "Model:     %s\n", m.Model)
	if res, err := providers.Resolve(cfg, m); err != nil {
		fmt.Fprintf(out, "Provider:  none (%v)\n", err)
	} else {
		key := "no key"
		if res.APIKey != "" {
			key = "key from " + res.KeySource
		}
		fmt.Fprintf(out, "Provider:  %s at %s, %s; resolved by %s\n", res.ProviderName, res.APIBase, key, res.Reason)
		fmt.Fprintf(out, "API model: %s\n", res.APIModel)
	}
	writeUnsupported(out, a.warnings)
	if cfg.Tools.CLIApps.Enable {
		installed := "none installed"
		if names := cliapps.ForConfig(cfg).InstalledNames(); len(names) > 0 {
			installed = "installed: " + strings.Join(names, ", ")
		}
		fmt.Fprintf(out, "CLI apps:  run_cli_app on, %s (nanobot cli-apps)\n", installed)
	}
	if w := workers.ImageGenerationWarning(cfg); w != "" {
		fmt.Fprintf(out, "Images:    %s\n", w)
	}
	if w := workers.WebSearchWarning(cfg); w != "" {
		fmt.Fprintf(out, "Web search: %s\n", w)
	}
	fmt.Fprintf(out, "Voice:     %s\n", transcription.Describe(cfg, os.Getenv))
	writeMCPLogins(out, cfg)
	addr, source := os.Getenv("TEMPORAL_ADDRESS"), "TEMPORAL_ADDRESS"
	if addr == "" {
		port, _ := devPorts()
		addr, source = net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), "embedded default"
	}
	state := "not answering"
	if answers(addr) {
		if c, err := dial(ctx, addr, envOr("TEMPORAL_NAMESPACE", "default"), a.log, 3*time.Second); err == nil {
			c.Close()
			state = "answering"
		} else {
			state = "listening, but not healthy: " + oneLine(err.Error())
		}
	} else if source == "embedded default" {
		state += " (started on demand by agent/gateway/worker)"
	}
	fmt.Fprintf(out, "Temporal:  %s (%s), namespace %s: %s\n", addr, source, envOr("TEMPORAL_NAMESPACE", "default"), state)
	writeSecurity(out, cfg, os.Getenv)
	a.writeDisk(ctx, out, cfg)
	return nil
}

// writeUnsupported lists the keys the config sets that this build reads
// but does not act on, one a line, each with why.
func writeUnsupported(out io.Writer, warnings []config.Warning) {
	var keys []config.Warning
	for _, w := range warnings {
		if w.Unsupported {
			keys = append(keys, w)
		}
	}
	if len(keys) == 0 {
		fmt.Fprintln(out, "Unsupported: none of the keys set")
		return
	}
	fmt.Fprintf(out, "Unsupported: %d keys set have no effect in this build\n", len(keys))
	for _, w := range keys {
		fmt.Fprintf(out, "  %s: %s\n", w.Key, strings.TrimPrefix(w.Msg, "has no effect in this build: "))
	}
}

// writeMCPLogins lists the MCP servers with "auth": "oauth" and whether they
// are logged in, since one that is not stays out of every turn.
func writeMCPLogins(out io.Writer, cfg *config.Config) {
	var names []string
	for name, srv := range cfg.Tools.MCPServers {
		if srv.Auth == mcp.AuthOAuth {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	lines := make([]string, 0, len(names))
	for _, name := range names {
		state := "logged in"
		if !mcp.LoggedIn(config.Home(), name, cfg.Tools.MCPServers[name].URL) {
			state = "not logged in: run nanobot mcp login " + name
		}
		lines = append(lines, name+" ("+state+")")
	}
	fmt.Fprintf(out, "MCP OAuth: %s\n", strings.Join(lines, "; "))
}
