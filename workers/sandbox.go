package workers

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/tools"
)

// sandboxFor is the config's bwrap layout with its proxy's rules: exec runs
// in it unless tools.exec.sandbox is "none", an MCP server with "sandbox": true always.
func sandboxFor(cfg *config.Config, log *slog.Logger) (*tools.Sandbox, error) {
	ws := cfg.Agents.Defaults.WorkspacePath()
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	file, dirs := cfg.PrivatePaths()
	ro, rw := cfg.SandboxBinds()
	sb := tools.NewSandbox(tools.SandboxLayout{
		Workspace: ws, Media: filepath.Join(ws, "media"),
		Hidden: dirs, HiddenFiles: []string{file},
		RoBinds: ro, RwBinds: rw, Network: cfg.Tools.Exec.SandboxNetworkOrDefault(),
	})
	guard, err := tools.NewSSRFGuard(cfg.Tools.SSRFWhitelist, nil) // web_fetch's rules, for the proxy too
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", cfg.Path, err)
	}
	sb.Egress = tools.EgressRules{Guard: guard, AllowDomains: cfg.Tools.Exec.SandboxAllowDomains, Log: log}
	return sb, nil
}

// sandboxActive reports whether exec runs in the sandbox here: wanted, and bwrap runs.
func sandboxActive(cfg *config.Config, sb *tools.Sandbox) bool {
	return cfg.Tools.Exec.SandboxMode() != config.SandboxNone && sb.Ready() == nil
}

// mcpSandboxed reports whether an MCP server of cfg runs in the sandbox.
func mcpSandboxed(cfg *config.Config) bool {
	for _, s := range cfg.Tools.MCPServers {
		if s.Sandbox {
			return true
		}
	}
	return false
}

// BwrapHint says how to get bubblewrap, for the lines that report it missing.
const BwrapHint = "get it with: apt install bubblewrap (the package of that name on other systems)"

// SandboxState is where exec runs here and what network it has, one line
// each, for the banner, `nanobot status` and its Security block. alarm is
// true when the line must stand out: exec unsandboxed by "auto", or a
// sandbox the config requires (tools.exec.sandbox "bwrap", an MCP server's) that cannot run.
func SandboxState(cfg *config.Config) (sandbox, network string, alarm bool) {
	sb, err := sandboxFor(cfg, nil)
	if err != nil {
		return err.Error(), "unknown", true
	}
	ready := sb.Ready()
	mcpBroken := ""
	if mcpSandboxed(cfg) && ready != nil {
		mcpBroken = "; MCP servers with \"sandbox\": true do not start: " + ready.Error()
	}
	unfiltered := "the host's, unfiltered (exec is not sandboxed)"
	switch {
	case cfg.Tools.Exec.SandboxMode() == config.SandboxNone:
		return `off (tools.exec.sandbox is "none"): exec runs with your rights, and the model can read your files and keys` + mcpBroken,
			unfiltered, mcpBroken != ""
	case ready == nil:
		return "bwrap: only " + sb.Workspace + " writable, the config and " + config.Home() + " hidden", sb.EgressSummary(), false
	case cfg.Tools.Exec.SandboxMode() == config.SandboxBwrap:
		return `tools.exec.sandbox is "bwrap" but ` + ready.Error() + ": exec calls (and sandboxed MCP servers) are refused until it can",
			"none (nothing runs)", true
	}
	return tools.ExecUnsandboxedWarning + " (" + ready.Error() + ")" + mcpBroken, unfiltered, true
}

// privatePaths are what no tool may touch: the config file, its folder, nanobot's home.
func privatePaths(cfg *config.Config) []string {
	file, dirs := cfg.PrivatePaths()
	return append([]string{file}, dirs...)
}
