package workers

import (
	"path/filepath"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/tools"
)

// sandboxFor is the config's bwrap layout: exec runs in it when
// tools.exec.sandbox is "bwrap", an MCP server with "sandbox": true always.
func sandboxFor(cfg *config.Config) *tools.Sandbox {
	ws := cfg.Agents.Defaults.WorkspacePath()
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	file, dirs := cfg.PrivatePaths()
	ro, rw := cfg.SandboxBinds()
	return tools.NewSandbox(tools.SandboxLayout{
		Workspace: ws, Media: filepath.Join(ws, "media"),
		Hidden: dirs, HiddenFiles: []string{file},
		RoBinds: ro, RwBinds: rw, Network: cfg.Tools.Exec.SandboxNetworkOrDefault(),
	})
}

// sandboxWanted reports whether anything of cfg runs in the sandbox.
func sandboxWanted(cfg *config.Config) bool {
	if cfg.Tools.Exec.Sandbox == config.SandboxBwrap {
		return true
	}
	for _, s := range cfg.Tools.MCPServers {
		if s.Sandbox {
			return true
		}
	}
	return false
}

// SandboxStatus says, for the banner, whether the sandbox the config asks
// for can run here: ok false with the reason when bwrap cannot, a one-line
// description when it can, "" when nothing is sandboxed.
func SandboxStatus(cfg *config.Config) (line string, ok bool) {
	if !sandboxWanted(cfg) {
		return "", true
	}
	sb := sandboxFor(cfg)
	if err := sb.Ready(); err != nil {
		what := "tools.exec.sandbox is \"bwrap\""
		if cfg.Tools.Exec.Sandbox != config.SandboxBwrap {
			what = "an MCP server asks for the sandbox"
		}
		return what + " but " + err.Error() + ": exec calls (and sandboxed MCP servers) are refused until it can", false
	}
	network := "network kept"
	if !sb.Network {
		network = "no network"
	}
	return "bwrap: only " + sb.Workspace + " writable, config and " + config.Home() + " hidden, " + network, true
}

// privatePaths are what no tool may touch: the config file, its folder, nanobot's home.
func privatePaths(cfg *config.Config) []string {
	file, dirs := cfg.PrivatePaths()
	return append([]string{file}, dirs...)
}
