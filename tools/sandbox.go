package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/tools/sandboxfwd"
)

// SandboxBwrap is tools.exec.sandbox's one backend.
const SandboxBwrap = "bwrap"

// sandboxSystemDirs are mounted read-only when present (nanobot's list):
// programs, libraries, certificates and name resolution, nothing of the user's.
var sandboxSystemDirs = []string{
	"/bin", "/lib", "/lib64", "/sbin", "/etc/alternatives", "/etc/ssl/certs", "/etc/pki/tls/certs",
	"/etc/pki/ca-trust", "/etc/crypto-policies", "/etc/resolv.conf", "/etc/hosts", "/etc/ld.so.cache",
	"/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
}

// sandboxProbeTimeout bounds the check that bwrap can run at all.
const sandboxProbeTimeout = 10 * time.Second

// SandboxLayout is the bubblewrap layout exec commands (and opted-in MCP
// servers) run in: only the workspace is writable, the media folder is read-only,
// system folders are read-only, the config and nanobot's home are hidden
// behind an empty read-only tmpfs, /tmp is private, everything else is
// read-only, no privilege can be gained, and the network is the sandbox's own
// (only its loopback): the way out, when there is one, is the worker's proxy.
type SandboxLayout struct {
	// Workspace is the absolute, symlink-resolved workspace: mounted read-write, HOME and the default cwd.
	Workspace string
	// Media is mounted read-only (attachments the channels saved).
	Media string
	// Hidden are folders covered by an empty tmpfs (the config's folder,
	// nanobot's home); the workspace's parent is always hidden, as in nanobot.
	Hidden []string
	// HiddenFiles are files masked when the workspace would show them (a config file kept in the workspace).
	HiddenFiles []string
	// RoBinds and RwBinds are extra absolute paths (tools.exec.sandboxRoBinds,
	// sandboxRwBinds), checked by the config loader against what is hidden.
	RoBinds, RwBinds []string
	// Network gives commands outbound HTTP(S) through the proxy; false: no network at all.
	Network bool
	// ProxySocket and Forwarder are the host's proxy socket and the binary
	// that relays to it from inside (set by Sandbox.Command when Network is on):
	// both are bound in and the forwarder runs the command.
	ProxySocket, Forwarder string
	// Program is the bwrap to run; "" means bwrap on PATH.
	Program string
}

// Sandbox is a layout, whether bwrap can run it here, and the proxy its
// commands reach the network through.
type Sandbox struct {
	SandboxLayout
	// Egress is what the proxy lets through when Network is on.
	Egress  EgressRules
	once    sync.Once
	program string // resolved by Ready
	err     error
	proxy   sandboxProxyOnce
}

// NewSandbox prepares a sandbox; bwrap is looked for at the first Ready.
func NewSandbox(l SandboxLayout) *Sandbox { return &Sandbox{SandboxLayout: l} }

// Argv is the bwrap command line that runs command (program and arguments)
// in the sandbox with cwd as its working directory; a cwd outside the
// workspace becomes the workspace.
func (s SandboxLayout) Argv(cwd string, command ...string) []string {
	return s.argv(s.programName(), cwd, command)
}

func (s SandboxLayout) argv(prog, cwd string, command []string) []string {
	ws := filepath.Clean(s.Workspace)
	// --unshare-net always: the host's loopback (Temporal, the Web UI, the web chat, the API) stays out of reach.
	args := []string{prog, "--new-session", "--die-with-parent", "--unshare-pid", "--unshare-net", "--cap-drop", "ALL",
		"--setenv", "HOME", ws, "--setenv", "TMPDIR", "/tmp"}
	proxied := s.Network && s.ProxySocket != "" && s.Forwarder != ""
	if proxied {
		for _, kv := range sandboxfwd.Env() {
			args = append(args, "--setenv", kv[0], kv[1])
		}
	}
	args = append(args, "--ro-bind", "/usr", "/usr")
	for _, d := range sandboxSystemDirs {
		args = append(args, "--ro-bind-try", d, d)
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
	outside, inside := s.hiddenDirs(ws)
	for _, d := range outside {
		args = append(args, "--tmpfs", d)
	}
	args = append(args, "--dir", ws, "--bind", ws, ws)
	for _, d := range inside {
		args = append(args, "--tmpfs", d)
	}
	for _, f := range s.HiddenFiles {
		if f = filepath.Clean(f); within(ws, f) && f != ws && !underAny(inside, f) {
			args = append(args, "--ro-bind", "/dev/null", f)
		}
	}
	if s.Media != "" {
		args = append(args, "--ro-bind-try", s.Media, s.Media)
	}
	for _, p := range s.RoBinds {
		args = append(args, "--ro-bind", p, p)
	}
	for _, p := range s.RwBinds {
		args = append(args, "--bind", p, p)
	}
	if proxied {
		args = append(args, "--ro-bind", s.Forwarder, sandboxfwd.Path, "--bind", s.ProxySocket, sandboxfwd.Socket)
	}
	// Read-only from here: a write outside the workspace fails instead of
	// landing in a tmpfs that vanishes (nanobot leaves these writable).
	for _, d := range append(outside, inside...) {
		args = append(args, "--remount-ro", d)
	}
	args = append(args, "--remount-ro", "/")
	dir := ws
	if c := filepath.Clean(cwd); cwd != "" && within(ws, c) {
		dir = c
	}
	args = append(args, "--chdir", dir, "--")
	if proxied {
		args = append(args, sandboxfwd.Path, "--")
	}
	return append(args, command...)
}

// hiddenDirs splits the folders to hide into those mounted before the
// workspace (outside it, or holding it) and those inside it, mounted after;
// a folder below another hidden one is already gone, and "/" or the
// workspace itself cannot be hidden without hiding everything.
func (s SandboxLayout) hiddenDirs(ws string) (outside, inside []string) {
	all := append([]string{filepath.Dir(ws)}, s.Hidden...)
	for i := range all {
		all[i] = filepath.Clean(all[i])
	}
	sort.Strings(all) // a parent sorts before its children
	for _, d := range all {
		if d == "/" || d == ws || d == "." {
			continue
		}
		if within(ws, d) {
			if !underAny(inside, d) {
				inside = append(inside, d)
			}
			continue
		}
		if !underAny(outside, d) {
			outside = append(outside, d)
		}
	}
	return outside, inside
}

// underAny reports whether p is one of dirs or below one.
func underAny(dirs []string, p string) bool {
	for _, d := range dirs {
		if within(d, p) {
			return true
		}
	}
	return false
}

func (s SandboxLayout) programName() string {
	if s.Program != "" {
		return s.Program
	}
	return "bwrap"
}

// Ready tells whether bwrap can run here, checked once per program and
// process: a missing program, or a kernel or container that forbids its
// namespaces (the network's included), is an error that says so.
func (s *Sandbox) Ready() error {
	s.once.Do(func() { s.program, s.err = probeBwrap(s.programName()) })
	return s.err
}

// probes are probeBwrap's answers by the program's path: a process runs each once.
var probes sync.Map

type probe struct {
	once sync.Once
	err  error
}

func probeBwrap(name string) (string, error) {
	prog, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("bwrap is not installed: %w", err)
	}
	v, _ := probes.LoadOrStore(prog, &probe{})
	p := v.(*probe)
	p.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), sandboxProbeTimeout)
		defer cancel()
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, prog, "--new-session", "--die-with-parent", "--unshare-pid", "--unshare-net",
			"--cap-drop", "ALL", "--ro-bind", "/", "/", "true")
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(stderr.String())
			if msg == "" {
				msg = err.Error()
			}
			p.err = fmt.Errorf("bwrap cannot run here: %s --unshare-net --ro-bind / / true failed: %s", prog, msg)
		}
	})
	return prog, p.err
}

// ErrSandboxUnavailable marks a command refused because its sandbox cannot run.
var ErrSandboxUnavailable = errors.New("sandbox unavailable")

// Command is exec.Cmd for argv run in the sandbox, or an error wrapping
// ErrSandboxUnavailable when bwrap cannot run. With Network on, the proxy
// starts at the first command and the forwarder runs argv.
func (s *Sandbox) Command(ctx context.Context, cwd string, argv ...string) (*exec.Cmd, error) {
	return s.CommandReading(ctx, nil, cwd, argv...)
}

// CommandReading is Command with extra folders shown read-only (installed
// CLI apps under nanobot's otherwise hidden home).
func (s *Sandbox) CommandReading(ctx context.Context, roBinds []string, cwd string, argv ...string) (*exec.Cmd, error) {
	if err := s.Ready(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSandboxUnavailable, err)
	}
	l := s.SandboxLayout
	l.RoBinds = append(append([]string(nil), l.RoBinds...), roBinds...)
	if l.Network {
		p, err := s.proxy.start(s.Egress)
		if err != nil {
			return nil, fmt.Errorf("%w: the network proxy: %w", ErrSandboxUnavailable, err)
		}
		l.ProxySocket, l.Forwarder = p.Socket(), p.forwarder
	}
	full := l.argv(s.program, cwd, argv)
	cmd := exec.CommandContext(ctx, full[0], full[1:]...)
	cmd.Dir = s.Workspace
	return cmd, nil
}

// Close stops the sandbox's proxy, if it started; running commands lose the network.
func (s *Sandbox) Close() error { return s.proxy.close() }
