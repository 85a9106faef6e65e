package config

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// tools.exec.sandbox's values: bwrap wherever it runs (the default; nanobot's
// "" means it too), bwrap or no exec at all, and the one explicit opt-out.
const (
	SandboxAuto  = "auto"
	SandboxBwrap = "bwrap"
	SandboxNone  = "none"
)

// SandboxMode is tools.exec.sandbox with "" read as "auto".
func (e *ExecTool) SandboxMode() string {
	if e.Sandbox == "" {
		return SandboxAuto
	}
	return e.Sandbox
}

// Home is nanobot's folder, ~/.nanobot: the default config, sessions, logs.
func Home() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ".nanobot"
	}
	return filepath.Join(home, ".nanobot")
}

// realPath is p made absolute with its symlinks resolved as far as it exists,
// so two spellings of one folder compare equal.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	// A missing tail: resolve the part that exists and keep the rest.
	dir, base := filepath.Split(p)
	if dir == p || dir == "" {
		return p
	}
	return filepath.Join(realPath(strings.TrimSuffix(dir, string(filepath.Separator))), base)
}

// PrivatePaths are what no tool may read or write and the sandbox hides: the
// config file, the folder that holds it, and nanobot's home. Each is
// absolute and symlink-resolved; the workspace inside one of them stays usable.
func (c *Config) PrivatePaths() (file string, dirs []string) {
	file = realPath(ExpandHome(c.Path))
	for _, d := range []string{filepath.Dir(file), realPath(Home())} {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return file, dirs
}

// within reports whether p is root or below it (both clean and absolute).
func within(root, p string) bool {
	if p == root {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// expandBind expands "~" and $VARS in a bind path, as nanobot does; an
// unset variable is kept as written so the error shows it.
func expandBind(p string) string {
	p = os.Expand(p, func(name string) string {
		if v, ok := os.LookupEnv(name); ok {
			return v
		}
		return "$" + name
	})
	return ExpandHome(strings.TrimSpace(p))
}

// SandboxBinds are tools.exec.sandboxRoBinds and sandboxRwBinds expanded and
// resolved, as validate accepted them.
func (c *Config) SandboxBinds() (ro, rw []string) {
	for _, p := range c.Tools.Exec.SandboxRoBinds {
		ro = append(ro, realPath(expandBind(p)))
	}
	for _, p := range c.Tools.Exec.SandboxRwBinds {
		rw = append(rw, realPath(expandBind(p)))
	}
	return ro, rw
}

// SandboxNetworkOrDefault reports whether sandboxed commands get outbound
// traffic through the proxy (tools.exec.sandboxNetwork; package managers need it).
func (e *ExecTool) SandboxNetworkOrDefault() bool {
	return e.SandboxNetwork == nil || *e.SandboxNetwork
}

// validateSandbox refuses a sandbox nanobot would not run and binds that
// are relative, missing, or would expose what the sandbox hides.
func (c *Config) validateSandbox(src string) error {
	e := &c.Tools.Exec
	switch e.Sandbox {
	case "", SandboxAuto, SandboxBwrap, SandboxNone:
	default:
		return &Error{Source: src, Key: "tools.exec.sandbox", Msg: fmt.Sprintf(
			"unknown sandbox %q: use \"auto\" (bwrap where it runs), \"bwrap\" (no exec without it) or \"none\"", e.Sandbox)}
	}
	for i, d := range e.SandboxAllowDomains {
		if msg := checkAllowDomain(d); msg != "" {
			return &Error{Source: src, Key: fmt.Sprintf("tools.exec.sandboxAllowDomains[%d]", i), Msg: fmt.Sprintf("%q %s", d, msg)}
		}
	}
	for _, list := range []struct {
		key   string
		binds []string
	}{{"tools.exec.sandboxRoBinds", e.SandboxRoBinds}, {"tools.exec.sandboxRwBinds", e.SandboxRwBinds}} {
		for i, b := range list.binds {
			if msg := c.checkBind(b); msg != "" {
				return &Error{Source: src, Key: fmt.Sprintf("%s[%d]", list.key, i), Msg: fmt.Sprintf("%q %s", b, msg)}
			}
		}
	}
	for name, s := range c.Tools.MCPServers {
		if !s.Sandbox {
			continue
		}
		if kind := s.Type; s.Command == "" || (kind != "" && kind != "stdio") {
			return &Error{Source: src, Key: "tools.mcpServers." + name + ".sandbox", Msg: "only a stdio server (one with a command) can run in the sandbox"}
		}
	}
	return nil
}

// checkBind says what is wrong with one bind path, or "".
func (c *Config) checkBind(raw string) string {
	p := expandBind(raw)
	switch {
	case p == "":
		return "is empty"
	case !filepath.IsAbs(p):
		return "is not an absolute path"
	}
	if _, err := os.Stat(p); err != nil {
		return "does not exist (" + err.Error() + ")"
	}
	p = realPath(p)
	ws := realPath(c.Agents.Defaults.WorkspacePath())
	file, dirs := c.PrivatePaths()
	for _, d := range dirs {
		switch {
		case within(p, d):
			return "would expose the config folder " + d
		case within(d, p) && !within(ws, p):
			return "is inside the config folder " + d + ", which the sandbox hides"
		}
	}
	if within(p, file) {
		return "would expose the config file " + file
	}
	if within(p, ws) {
		return "covers the workspace " + ws + " and the folder holding it, which the sandbox hides"
	}
	return ""
}

// checkAllowDomain says what is wrong with one sandboxAllowDomains entry, or
// "": a host name (covering its subdomains) or an IP address, nothing more.
func checkAllowDomain(d string) string {
	d = strings.TrimSuffix(strings.TrimSpace(d), ".")
	switch {
	case d == "":
		return "is empty"
	case strings.HasPrefix(d, "*."):
		return fmt.Sprintf("has a wildcard: write %q, an entry covers its subdomains", d[2:])
	case strings.Contains(d, "://") || strings.ContainsAny(d, "/:@ *"):
		if _, err := netip.ParseAddr(strings.Trim(d, "[]")); err == nil {
			return ""
		}
		return "is not a host name: write the domain alone (example.com), no scheme, port or path"
	}
	return ""
}
