package cliapps

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/atomicfile"
	"github.com/nanobot-durable/nanobot/config"
)

// nanobot's runtime defaults (tools.cliApps).
const (
	DefaultInstallTimeout = 300 * time.Second
	DefaultRunTimeout     = 60 * time.Second
	DefaultCatalogTTL     = time.Hour
)

// Manager is the catalog, the installs and their record under Dir.
type Manager struct {
	// Dir is nanobot's runtime folder for CLI Apps: <config folder>/cli-apps.
	Dir string
	// Workspace is where an installed app's skill is written (skills/cli-app-<name>/SKILL.md).
	Workspace string
	// Sources are the registries; nil means DefaultSources.
	Sources []Source
	// HTTP fetches registries and skills; nil is a client without a timeout of its own (each fetch has 15 s).
	HTTP *http.Client
	// CatalogTTL and InstallTimeout; zero means nanobot's defaults.
	CatalogTTL, InstallTimeout time.Duration
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// NewManager is the manager of the CLI Apps kept beside the config in configDir.
func NewManager(configDir, workspace string) *Manager {
	return &Manager{Dir: filepath.Join(configDir, "cli-apps"), Workspace: workspace}
}

// ForConfig is the manager of cfg's home with tools.cliApps' settings.
func ForConfig(cfg *config.Config) *Manager {
	m := NewManager(config.ConfigDir(cfg.Path), cfg.Agents.Defaults.WorkspacePath())
	m.CatalogTTL = time.Duration(cfg.Tools.CLIApps.CatalogTTLSeconds) * time.Second
	m.InstallTimeout = time.Duration(cfg.Tools.CLIApps.InstallTimeout) * time.Second
	return m
}

func (m *Manager) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Manager) sources() []Source {
	if m.Sources != nil {
		return m.Sources
	}
	return DefaultSources()
}

func (m *Manager) client() *http.Client {
	if m.HTTP != nil {
		return m.HTTP
	}
	return http.DefaultClient
}

func (m *Manager) catalogTTL() time.Duration {
	if m.CatalogTTL > 0 {
		return m.CatalogTTL
	}
	return DefaultCatalogTTL
}

func (m *Manager) installTimeout() time.Duration {
	if m.InstallTimeout > 0 {
		return m.InstallTimeout
	}
	return DefaultInstallTimeout
}

// Installed is the record of one install (nanobot's installed.json entry).
type Installed struct {
	Name           string `json:"-"`
	Version        string `json:"version"`
	EntryPoint     string `json:"entry_point"`
	Source         string `json:"source"`
	Strategy       string `json:"strategy"`
	InstalledAt    int64  `json:"installed_at"`
	DisplayName    string `json:"display_name,omitempty"`
	Category       string `json:"category,omitempty"`
	Description    string `json:"description,omitempty"`
	Requires       string `json:"requires,omitempty"`
	EntryPointPath string `json:"entry_point_path,omitempty"`
}

type installedFile struct {
	SchemaVersion int                  `json:"schema_version"`
	Apps          map[string]Installed `json:"apps"`
}

func (m *Manager) installedPath() string { return filepath.Join(m.Dir, "installed.json") }

// InstalledApps is the record, by registry name; a missing file is none.
func (m *Manager) InstalledApps() (map[string]Installed, error) {
	raw, err := os.ReadFile(m.installedPath())
	if os.IsNotExist(err) {
		return map[string]Installed{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", m.installedPath(), err)
	}
	var f installedFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", m.installedPath(), err)
	}
	if f.Apps == nil {
		f.Apps = map[string]Installed{}
	}
	for name, in := range f.Apps {
		in.Name = name
		f.Apps[name] = in
	}
	return f.Apps, nil
}

// InstalledNames are the installed apps' names, sorted.
func (m *Manager) InstalledNames() []string {
	apps, _ := m.InstalledApps()
	names := make([]string, 0, len(apps))
	for n := range apps {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup is the installed app named name (case-insensitively).
func (m *Manager) Lookup(name string) (Installed, bool, error) {
	apps, err := m.InstalledApps()
	if err != nil {
		return Installed{}, false, err
	}
	for n, in := range apps {
		if strings.EqualFold(n, name) {
			return in, true, nil
		}
	}
	return Installed{}, false, nil
}

func (m *Manager) saveInstalled(apps map[string]Installed) error {
	body, err := json.MarshalIndent(installedFile{SchemaVersion: 1, Apps: apps}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(m.installedPath(), body)
}

// BinDirs are the folders installs put entry points in (npm's prefix,
// the pip virtualenv): searched after PATH, and visible in the sandbox.
func (m *Manager) BinDirs() []string {
	return []string{filepath.Join(m.npmPrefix(), "bin"), filepath.Join(m.venv(), "bin")}
}

// Roots are the folders holding installed apps (their bin dirs' parents).
func (m *Manager) Roots() []string { return []string{m.npmPrefix(), m.venv()} }

func (m *Manager) npmPrefix() string { return filepath.Join(m.Dir, "npm") }
func (m *Manager) venv() string      { return filepath.Join(m.Dir, "venv") }

// Which resolves an entry point: the managed bin dirs first, then PATH.
func (m *Manager) Which(entry string) (string, error) {
	if entry == "" || strings.ContainsRune(entry, '/') {
		return "", fmt.Errorf("%q is not a command name", entry)
	}
	for _, d := range m.BinDirs() {
		p := filepath.Join(d, entry)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(entry)
	if err != nil {
		return "", fmt.Errorf("%s is not available on PATH", entry)
	}
	return filepath.Abs(p)
}

// writeFileAtomic replaces path (0600, in a 0700 folder) so a reader never sees half of it.
func writeFileAtomic(path string, body []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, body, 0o600)
}

// mention is an app named in a message as @name (nanobot's rule).
var mention = regexp.MustCompile(`(?i)(^|[\s(\[{])@([a-z0-9_-]+)\b`)

// MentionLines are the runtime-context lines for the installed apps a
// message names as @name, once each (nanobot's "CLI App Mention").
func (m *Manager) MentionLines(text string) []string {
	if !strings.Contains(text, "@") {
		return nil
	}
	apps, err := m.InstalledApps()
	if err != nil || len(apps) == 0 {
		return nil
	}
	byLower := make(map[string]Installed, len(apps))
	for name, in := range apps {
		byLower[strings.ToLower(name)] = in
	}
	var lines []string
	for _, match := range mention.FindAllStringSubmatch(text, -1) {
		want := strings.ToLower(match[2])
		in, ok := byLower[want]
		if !ok {
			continue
		}
		delete(byLower, want) // once each
		entry := in.EntryPoint
		if entry == "" {
			entry = "unknown"
		}
		lines = append(lines, fmt.Sprintf("CLI App Mention: @%s (installed; tool=run_cli_app; entry_point=%s; "+
			"skill=skills/%s/SKILL.md). Read the skill when useful, then run this app with `run_cli_app`; "+
			"do not bypass it with shell.", in.Name, entry, SkillName(in.Name)))
	}
	return lines
}
