package cliapps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/shlex"
)

// shellMeta in an install command means a script, which nanobot refuses to run.
var shellMeta = []string{"|", "&&", "||", ";", "$(", "`", ">", "<"}

func hasShellMeta(s string) bool {
	for _, m := range shellMeta {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

var unsafeNameChars = regexp.MustCompile(`[^a-z0-9_-]+`)

// SkillName is the skill folder an installed app's notes go in: cli-app-<name>.
func SkillName(name string) string {
	clean := strings.Trim(unsafeNameChars.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if clean == "" {
		clean = "app"
	}
	return "cli-app-" + clean
}

// Strategy is how an app installs: bundled, npm, pip, uv, brew or unsupported (nanobot's rule).
func (a App) Strategy() string {
	pm, is := strings.ToLower(a.PackageManager), strings.ToLower(a.InstallStrategy)
	switch {
	case pm == "bundled" || is == "bundled":
		return "bundled"
	case pm == "npm" || pm == "brew" || pm == "uv" || pm == "pip":
		return pm
	case a.NPMPackage != "":
		return "npm"
	case pipArgs(a.InstallCmd) != nil:
		return "pip"
	}
	return "unsupported"
}

// pipArgs are the arguments of "pip install …" or "python3 -m pip install …", nil for anything else.
func pipArgs(cmd string) []string {
	t, err := shlex.Split(cmd)
	if err != nil {
		return nil
	}
	if len(t) >= 3 && t[0] == "pip" && t[1] == "install" {
		return t[2:]
	}
	if len(t) >= 5 && (t[0] == "python" || t[0] == "python3") && t[1] == "-m" && t[2] == "pip" && t[3] == "install" {
		return t[4:]
	}
	return nil
}

// argv is the command that does action (install, update, uninstall) for a;
// nil for a bundled app (nothing to run).
func (m *Manager) argv(a App, action string) ([]string, error) {
	switch a.Strategy() {
	case "bundled":
		return nil, nil
	case "npm":
		npm, err := exec.LookPath("npm")
		if err != nil {
			return nil, errors.New("npm is not installed")
		}
		if a.NPMPackage == "" {
			return nil, errors.New("registry entry has no npm_package")
		}
		// Into our own prefix, not the machine's global one: no root needed, and the sandbox is shown just this.
		base := []string{npm, "--prefix", m.npmPrefix(), "--global"}
		switch action {
		case "install":
			return append(base, "install", a.NPMPackage), nil
		case "update":
			return append(base, "install", a.NPMPackage+"@latest"), nil
		}
		return append(base, "uninstall", a.NPMPackage), nil
	case "pip":
		args := pipArgs(a.InstallCmd)
		if args == nil || hasShellMeta(a.InstallCmd) {
			return nil, errors.New("unsupported pip install command")
		}
		pip := filepath.Join(m.venv(), "bin", "pip")
		switch action {
		case "install":
			return append([]string{pip, "install"}, args...), nil
		case "update":
			return append([]string{pip, "install", "--upgrade", "--force-reinstall"}, args...), nil
		}
		var pkgs []string
		for _, arg := range args {
			if !strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, "git+") {
				pkgs = append(pkgs, arg)
			}
		}
		if len(pkgs) == 0 {
			return nil, errors.New("no package to uninstall in " + a.InstallCmd)
		}
		return append([]string{pip, "uninstall", "-y"}, pkgs...), nil
	case "uv", "brew":
		key := map[string]string{"install": a.InstallCmd, "update": a.UpdateCmd, "uninstall": a.UninstallCmd}[action]
		if key == "" {
			return nil, fmt.Errorf("no %s_cmd is defined for %s", action, a.Name)
		}
		if hasShellMeta(key) {
			return nil, errors.New("script-style install commands are disabled")
		}
		argv, err := shlex.Split(key)
		if err != nil {
			return nil, fmt.Errorf("invalid command: %w", err)
		}
		if len(argv) == 0 || argv[0] != a.Strategy() {
			return nil, fmt.Errorf("unsupported %s command", a.Strategy())
		}
		return argv, nil
	}
	return nil, errors.New("this CLI app uses an unsupported install strategy")
}

// run runs an install command with the install timeout; its output is the error on failure.
func (m *Manager) run(ctx context.Context, argv []string) error {
	ctx, cancel := context.WithTimeout(ctx, m.installTimeout())
	defer cancel()
	slog.Info("CLI Apps: running", "command", strings.Join(argv, " "))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%s timed out after %s", argv[0], m.installTimeout())
	}
	if err != nil {
		text := strings.TrimSpace(out.String())
		if text == "" {
			text = err.Error()
		}
		return errors.New(truncate(text, 4000))
	}
	return nil
}

// Install installs the catalog's app named name and records it; the message says what happened.
func (m *Manager) Install(ctx context.Context, name string) (string, error) {
	a, err := m.App(ctx, name, false)
	if err != nil {
		return "", err
	}
	strategy := a.Strategy()
	if strategy == "unsupported" || hasShellMeta(a.InstallCmd) {
		return "", errors.New("this CLI app uses an unsupported install strategy")
	}
	if _, err := m.Which(a.EntryPoint); a.EntryPoint != "" && err == nil {
		return fmt.Sprintf("CLI for %s is already available.", a.Title()), m.record(ctx, a)
	}
	if strategy == "bundled" {
		detect := a.DetectCmd
		if detect == "" {
			detect = a.EntryPoint
		}
		if parts, _ := shlex.Split(detect); len(parts) > 0 {
			if _, err := exec.LookPath(parts[0]); err == nil {
				return fmt.Sprintf("CLI for %s is available.", a.Title()), m.record(ctx, a)
			}
		}
		if a.InstallNotes != "" {
			return "", errors.New(a.InstallNotes)
		}
		return "", fmt.Errorf("%s is bundled with its parent app", a.Title())
	}
	if strategy == "pip" {
		if err := m.ensureVenv(ctx); err != nil {
			return "", err
		}
	}
	if err := m.runAction(ctx, a, "install"); err != nil {
		return "", err
	}
	return fmt.Sprintf("Installed CLI for %s.", a.Title()), m.record(ctx, a)
}

// Update reinstalls an installed app at the catalog's newest version.
func (m *Manager) Update(ctx context.Context, name string) (string, error) {
	a, err := m.App(ctx, name, true)
	if err != nil {
		return "", err
	}
	if _, ok, err := m.Lookup(a.Name); err != nil || !ok {
		return "", errors.Join(errors.New("CLI app is not installed"), err)
	}
	if err := m.runAction(ctx, a, "update"); err != nil {
		return "", err
	}
	return fmt.Sprintf("Updated CLI for %s.", a.Title()), m.record(ctx, a)
}

// runAction runs the package manager's command for action on a (none for a bundled app).
func (m *Manager) runAction(ctx context.Context, a App, action string) error {
	argv, err := m.argv(a, action)
	if err != nil || argv == nil {
		return err
	}
	return m.run(ctx, argv)
}

// Uninstall removes an installed app, its record and its skill.
func (m *Manager) Uninstall(ctx context.Context, name string) (string, error) {
	in, ok, err := m.Lookup(name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errors.New("CLI app is not installed")
	}
	a, err := m.App(ctx, in.Name, false)
	if err != nil {
		return "", err
	}
	if err := m.runAction(ctx, a, "uninstall"); err != nil {
		return "", err
	}
	bundled := a.Strategy() == "bundled" // nothing was run for it
	if !bundled && in.EntryPointPath != "" {
		if _, err := os.Stat(in.EntryPointPath); err == nil {
			return fmt.Sprintf("Uninstall for %s completed, but the recorded entry point at %s still exists, "+
				"so nanobot kept it installed.", a.Title(), in.EntryPointPath), nil
		}
	}
	apps, err := m.InstalledApps()
	if err != nil {
		return "", err
	}
	delete(apps, in.Name)
	if err := m.saveInstalled(apps); err != nil {
		return "", err
	}
	if err := os.RemoveAll(filepath.Join(m.Workspace, "skills", SkillName(in.Name))); err != nil {
		return "", err
	}
	if _, err := m.Which(a.EntryPoint); !bundled && err == nil {
		return fmt.Sprintf("Uninstalled CLI for %s, but another %s is still available on PATH.", a.Title(), a.EntryPoint), nil
	}
	return fmt.Sprintf("Uninstalled CLI for %s.", a.Title()), nil
}

// ensureVenv makes the virtualenv pip installs go into (Debian's python3 refuses installs into its own).
func (m *Manager) ensureVenv(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(m.venv(), "bin", "pip")); err == nil {
		return nil
	}
	if err := m.run(ctx, []string{"python3", "-m", "venv", m.venv()}); err != nil {
		return fmt.Errorf("python3 -m venv %s (on Debian: apt install python3-venv): %w", m.venv(), err)
	}
	return nil
}

// record writes the app into installed.json and its skill into the workspace.
func (m *Manager) record(ctx context.Context, a App) error {
	apps, err := m.InstalledApps()
	if err != nil {
		return err
	}
	in := Installed{
		Version: a.Version, EntryPoint: a.EntryPoint, Source: a.Source, Strategy: a.Strategy(),
		InstalledAt: m.now().Unix(), DisplayName: a.DisplayName, Category: a.Category,
		Description: a.Description, Requires: a.Requires,
	}
	if in.Version == "" {
		in.Version = "unknown"
	}
	if p, err := m.Which(a.EntryPoint); err == nil {
		in.EntryPointPath = p
	}
	apps[a.Name] = in
	if err := m.saveInstalled(apps); err != nil {
		return err
	}
	return m.writeSkill(ctx, a)
}

func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	return s[:limit] + fmt.Sprintf("\n\n... truncated %d characters ...", len(s)-limit)
}
