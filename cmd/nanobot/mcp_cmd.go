package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/mcp"
)

const mcpUsage = `usage: nanobot mcp login <server> [--listen 127.0.0.1:PORT]
  Authorize nanobot for a remote MCP server with "auth": "oauth": prints the URL to open in a
  browser, waits for the browser to come back to 127.0.0.1 and stores the tokens (0600) under
  ~/.nanobot/auth/mcp.json. A running gateway picks them up on its next connection attempt.`

// mcpCmd is `nanobot mcp login <server>`.
func (a *app) mcpCmd(ctx context.Context, args []string) error {
	fs := a.flags("mcp")
	listen := fs.String("listen", "127.0.0.1:0", "login: where the OAuth callback listens (a loopback address)")
	fs.Usage = func() { fmt.Fprintln(a.stderr, mcpUsage) }
	if len(args) < 2 || args[0] != "login" || strings.HasPrefix(args[1], "-") {
		return usageError{errors.New(mcpUsage)}
	}
	name := args[1]
	if err := a.parse(fs, args[2:]); err != nil {
		return err
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	server, ok := cfg.Tools.MCPServers[name]
	if !ok {
		names := make([]string, 0, len(cfg.Tools.MCPServers))
		for n := range cfg.Tools.MCPServers {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("no MCP server %q in tools.mcpServers (have: %s)", name, strings.Join(names, ", "))
	}
	err = mcp.Login(ctx, config.Home(), name, server, *listen, func(authURL string) {
		fmt.Fprintf(a.stdout, "Open this URL in a browser to authorize nanobot for %s:\n\n  %s\n\nWaiting for the browser…\n", name, authURL)
	})
	if err != nil {
		return fmt.Errorf("mcp login %s: %w", name, err)
	}
	fmt.Fprintf(a.stdout, "Authorized: %s's tokens are stored in %s\n", name, "~/.nanobot/"+mcp.CredentialsFile)
	return nil
}
