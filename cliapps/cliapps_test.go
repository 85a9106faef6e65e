package cliapps_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/cliapps"
	"github.com/nanobot-durable/nanobot/cliapps/cliappspeer"
)

var helloApp = map[string]any{
	"name": "hello", "display_name": "Hello", "description": "The official greeter.", "category": "demo",
	"version": "1.0.0", "entry_point": "hello-cli", "npm_package": "hello-cli", "package_manager": "npm",
	"skill_md": "skills/hello/SKILL.md",
}

const helloScript = `const a = process.argv.slice(2);
console.log(JSON.stringify({hello: a.includes("--json") ? "json" : "text", args: a}));
`

func newManager(t *testing.T, srv *cliappspeer.Server) *cliapps.Manager {
	t.Setenv(cliapps.CatalogEnv, srv.URL)
	return &cliapps.Manager{Dir: filepath.Join(t.TempDir(), "cli-apps"), Workspace: t.TempDir()}
}

// TestCatalogMergesCachesAndFallsBack: the registries merge by name (a
// later one's fields win, the sources joined), the cache answers within its
// TTL, a refresh after it, a stale cache when the registry is down, and a
// required registry that cannot be read and has no cache is an error.
func TestCatalogMergesCachesAndFallsBack(t *testing.T) {
	srv := cliappspeer.Start(t, map[string]any{
		"registry.json": map[string]any{"meta": map[string]any{"updated": "2026-11-01"},
			"clis": []any{helloApp, map[string]any{"name": "Tool", "entry_point": "tool"}, map[string]any{"nameless": true}}},
		"public_registry.json": map[string]any{"meta": map[string]any{"updated": "2026-11-20"},
			"clis": []any{map[string]any{"name": "tool", "description": "from public", "version": "2"}}},
		"extensions/registry.json": map[string]any{"clis": []any{}},
	}, nil)
	m := newManager(t, srv)
	now := time.Unix(1_800_000_000, 0)
	m.Now = func() time.Time { return now }
	apps, updated, err := m.Catalog(context.Background(), false)
	require.NoError(t, err)
	require.Equal(t, "2026-11-20", updated)
	require.Len(t, apps, 2)
	require.Equal(t, "hello", apps[0].Name)
	require.Equal(t, "harness", apps[0].Source)
	require.Equal(t, "tool", apps[1].Name, "the later registry's fields win")
	require.Equal(t, "from public", apps[1].Description)
	require.Equal(t, "tool", apps[1].EntryPoint, "fields the later one lacks are kept")
	require.Equal(t, "harness+public", apps[1].Source)
	fetches := len(srv.Requests())
	require.Equal(t, 3, fetches, "three registries asked")

	_, _, err = m.Catalog(context.Background(), false)
	require.NoError(t, err)
	require.Len(t, srv.Requests(), fetches, "within the TTL the cache answers")
	now = now.Add(cliapps.DefaultCatalogTTL + time.Second)
	_, _, err = m.Catalog(context.Background(), false)
	require.NoError(t, err)
	require.Len(t, srv.Requests(), 2*fetches, "after the TTL the registries are asked again")

	t.Setenv(cliapps.CatalogEnv, srv.URL+"/gone")
	now = now.Add(2 * cliapps.DefaultCatalogTTL)
	stale, _, err := m.Catalog(context.Background(), false)
	require.NoError(t, err, "a registry that cannot be read falls back to its cache")
	require.Len(t, stale, 2)
	require.Equal(t, "/gone/registry.json", srv.Requests()[2*fetches], "the registry was asked first")
	_, err = m.App(context.Background(), "nope", false)
	require.EqualError(t, err, "CLI app 'nope' not found")

	empty := &cliapps.Manager{Dir: t.TempDir(), HTTP: &http.Client{Transport: httpDown{}}}
	_, _, err = empty.Catalog(context.Background(), false)
	require.ErrorContains(t, err, "the harness registry")
}

// TestInstallWithNPMRunsAndUninstalls: install runs the real npm against
// the registry at the wire into nanobot's own prefix, records the app and
// writes its skill (the registry's, with nanobot's run_cli_app note);
// uninstall removes all three.
func TestInstallWithNPMRunsAndUninstalls(t *testing.T) {
	cliappspeer.NPM(t)
	srv := cliappspeer.Start(t, map[string]any{
		"registry.json":        map[string]any{"clis": []any{helloApp}},
		"public_registry.json": map[string]any{"clis": []any{}},
	}, map[string]string{"skills/hello/SKILL.md": "---\nname: hello\ndescription: greet\n---\n\n# Hello\n\nRun it.\n"},
		cliappspeer.Package{Name: "hello-cli", Version: "1.0.0", Bin: "hello-cli", Script: helloScript})
	for _, kv := range srv.NPMEnv(t.TempDir()) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	m := newManager(t, srv)
	ctx := context.Background()
	msg, err := m.Install(ctx, "HELLO")
	require.NoError(t, err)
	require.Equal(t, "Installed CLI for Hello.", msg)
	entry, err := m.Which("hello-cli")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(m.Dir, "npm", "bin", "hello-cli"), entry, "installed into nanobot's prefix")
	out, err := exec.Command(entry, "--json", "x").Output()
	require.NoError(t, err)
	require.JSONEq(t, `{"hello":"json","args":["--json","x"]}`, string(out))

	in, ok, err := m.Lookup("Hello")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "npm", in.Strategy)
	require.Equal(t, entry, in.EntryPointPath)
	require.Equal(t, []string{"hello"}, m.InstalledNames())
	skill, err := os.ReadFile(filepath.Join(m.Workspace, "skills", "cli-app-hello", "SKILL.md"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(skill), "---\nname: hello\ndescription: greet\n---\n\n<!-- nanobot-cli-app-note -->"), string(skill))
	require.Contains(t, string(skill), "Use the `run_cli_app` tool with `name=\"hello\"`")
	require.Contains(t, string(skill), "# Hello\n\nRun it.")

	msg, err = m.Uninstall(ctx, "hello")
	require.NoError(t, err)
	require.Equal(t, "Uninstalled CLI for Hello.", msg)
	require.NoFileExists(t, entry)
	require.Empty(t, m.InstalledNames())
	require.NoDirExists(t, filepath.Join(m.Workspace, "skills", "cli-app-hello"))
	_, err = m.Uninstall(ctx, "hello")
	require.EqualError(t, err, "CLI app is not installed")
}

// TestInstallAnAppAlreadyOnPath: an app whose entry point the machine has
// is recorded without running an installer, with nanobot's fallback skill
// (no skill in the registry; "official" dropped from the description).
func TestInstallAnAppAlreadyOnPath(t *testing.T) {
	srv := cliappspeer.Start(t, map[string]any{
		"registry.json": map[string]any{"clis": []any{
			map[string]any{"name": "shell", "entry_point": "sh", "description": "The official shell.", "package_manager": "bundled"},
			map[string]any{"name": "scripted", "entry_point": "no-such-cli", "install_cmd": "curl x | sh"},
			map[string]any{"name": "parent", "entry_point": "no-such-cli", "package_manager": "bundled", "install_notes": "Comes with Parent.app."},
		}},
		"public_registry.json": map[string]any{"clis": []any{}},
	}, nil)
	m := newManager(t, srv)
	msg, err := m.Install(context.Background(), "shell")
	require.NoError(t, err)
	require.Equal(t, "CLI for shell is already available.", msg)
	skill, err := os.ReadFile(filepath.Join(m.Workspace, "skills", "cli-app-shell", "SKILL.md"))
	require.NoError(t, err)
	require.Contains(t, string(skill), "description: >-\n  The shell.\n---\n\n<!-- nanobot-cli-app-note -->")
	require.Contains(t, string(skill), "sh --json --help")

	require.Equal(t, []string{"CLI App Mention: @shell (installed; tool=run_cli_app; entry_point=sh; skill=skills/cli-app-shell/SKILL.md). " +
		"Read the skill when useful, then run this app with `run_cli_app`; do not bypass it with shell."},
		m.MentionLines("run (@SHELL) twice: @shell, not @parent or mail@shell.example"), "once, installed only, not inside a word")
	require.Empty(t, m.MentionLines("no mention here"))

	_, err = m.Install(context.Background(), "scripted")
	require.EqualError(t, err, "this CLI app uses an unsupported install strategy")
	_, err = m.Install(context.Background(), "parent")
	require.EqualError(t, err, "Comes with Parent.app.")
}

// TestStrategies: nanobot's rule for how an app installs.
func TestStrategies(t *testing.T) {
	for want, a := range map[string]cliapps.App{
		"bundled":     {InstallStrategy: "Bundled"},
		"npm":         {NPMPackage: "x"},
		"pip":         {InstallCmd: "python3 -m pip install cli-anything-gimp"},
		"uv":          {PackageManager: "uv", InstallCmd: "uv tool install x"},
		"unsupported": {InstallCmd: "curl https://x | sh"},
	} {
		require.Equal(t, want, a.Strategy(), "%+v", a)
	}
	require.Equal(t, "cli-app-my-app", cliapps.SkillName("My App!"))
}

// httpDown is a transport whose every request fails.
type httpDown struct{}

func (httpDown) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("network down")
}
