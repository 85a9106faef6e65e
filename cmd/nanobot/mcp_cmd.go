package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/mcp"
)

const mcpUsage = `usage: nanobot mcp login <server> [--listen 127.0.0.1:PORT]
  Authorize nanobot for a remote MCP server with "auth": "oauth": prints the URL to open in a
  browser and stores the tokens (0600) under ~/.nanobot/auth/mcp.json. With a gateway running
  on this config the browser comes back to the gateway's callback (gateway.port), else to a
  listener of this command on 127.0.0.1 (--listen chooses it). The gateway's connections pick
  the tokens up on their next attempt.`

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
	show := func(authURL string) {
		fmt.Fprintf(a.stdout, "Open this URL in a browser to authorize nanobot for %s:\n\n  %s\n\nWaiting for the browser…\n", name, authURL)
	}
	if gateway := runningGateway(ctx, cfg); gateway != "" && !flagSet(fs, "listen") {
		fmt.Fprintf(a.stdout, "The browser comes back to the gateway at %s.\n", gateway)
		err = mcp.LoginViaGateway(ctx, config.Home(), name, server, gateway, show)
	} else {
		err = mcp.Login(ctx, config.Home(), name, server, *listen, show)
	}
	if err != nil {
		return fmt.Errorf("mcp login %s: %w", name, err)
	}
	fmt.Fprintf(a.stdout, "Authorized: %s's tokens are stored in %s\n", name, "~/.nanobot/"+mcp.CredentialsFile)
	return nil
}

// runningGateway is the base URL of the gateway of this home serving its
// health endpoints on gateway.port, "" if none answers there.
func runningGateway(ctx context.Context, cfg *config.Config) string {
	if cfg.Gateway.Port <= 0 {
		return ""
	}
	host := cfg.Gateway.Host
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	base := "http://" + net.JoinHostPort(host, strconv.Itoa(cfg.Gateway.Port))
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var health struct {
		Command string `json:"command"`
		Home    string `json:"home"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&health) != nil ||
		health.Command != "gateway" || health.Home != homeID() { // another home's gateway could not finish our login
		return ""
	}
	return base
}
