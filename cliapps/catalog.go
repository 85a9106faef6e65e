// Package cliapps is nanobot's CLI Apps: a catalog of command-line apps
// (CLI-Anything's registries and nanobot-extension's), the owner's installs
// of them (npm, pip, uv, brew or already on the machine) and the record of
// what is installed, which run_cli_app reads. The model never installs: an
// app is installed by the owner (`nanobot cli-apps install`), then the model
// may run it by name.
package cliapps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Source is one registry of the catalog.
type Source struct {
	// Name is nanobot's: harness, public, extensions.
	Name string
	// URL is the registry JSON ({"meta": {...}, "clis": [...]}).
	URL string
	// RawBase is where a registry entry's relative skill_md is fetched from.
	RawBase string
	// Required: the catalog fails when this source cannot be read (and has no cache).
	Required bool
}

// CatalogEnv, when set, is the base URL of all three registries
// (base/registry.json, base/public_registry.json, base/extensions/registry.json):
// a mirror for a machine that cannot reach nanobot's, or a test's fake.
const CatalogEnv = "NANOBOT_CLI_APPS_CATALOG"

// DefaultSources are nanobot's registries, or CatalogEnv's mirror of them.
func DefaultSources() []Source {
	if base := strings.TrimRight(os.Getenv(CatalogEnv), "/"); base != "" {
		return []Source{
			{"harness", base + "/registry.json", base, true},
			{"public", base + "/public_registry.json", base, true},
			{"extensions", base + "/extensions/registry.json", base + "/extensions", false},
		}
	}
	const cliAnything = "https://hkuds.github.io/CLI-Anything"
	const cliAnythingRaw = "https://raw.githubusercontent.com/HKUDS/CLI-Anything/main"
	const extensionRaw = "https://raw.githubusercontent.com/Re-bin/nanobot-extension/main"
	return []Source{
		{"harness", cliAnything + "/registry.json", cliAnythingRaw, true},
		{"public", cliAnything + "/public_registry.json", cliAnythingRaw, true},
		{"extensions", extensionRaw + "/registry.json", extensionRaw, false},
	}
}

// App is a catalog entry (the registry's fields nanobot acts on).
type App struct {
	Name            string `json:"name"`
	DisplayName     string `json:"display_name,omitempty"`
	Description     string `json:"description,omitempty"`
	Category        string `json:"category,omitempty"`
	Version         string `json:"version,omitempty"`
	EntryPoint      string `json:"entry_point,omitempty"`
	InstallCmd      string `json:"install_cmd,omitempty"`
	UpdateCmd       string `json:"update_cmd,omitempty"`
	UninstallCmd    string `json:"uninstall_cmd,omitempty"`
	NPMPackage      string `json:"npm_package,omitempty"`
	PackageManager  string `json:"package_manager,omitempty"`
	InstallStrategy string `json:"install_strategy,omitempty"`
	DetectCmd       string `json:"detect_cmd,omitempty"`
	InstallNotes    string `json:"install_notes,omitempty"`
	SkillMD         string `json:"skill_md,omitempty"`
	Requires        string `json:"requires,omitempty"`

	// Source is the registry (or registries, "harness+public") the entry came from.
	Source  string `json:"-"`
	rawBase string
}

// Title is the app's display name, its registry name when it has none.
func (a App) Title() string {
	if a.DisplayName != "" {
		return a.DisplayName
	}
	return a.Name
}

// cachedRegistry is a registry kept on disk with when it was fetched (nanobot's cache file).
type cachedRegistry struct {
	CachedAt float64         `json:"_cached_at"`
	Data     json.RawMessage `json:"data"`
}

func (m *Manager) cachePath(source string) string {
	return filepath.Join(m.Dir, source+"_registry_cache.json")
}

// registry returns a source's registry: the cache while it is younger than
// the TTL, else a fetch, else (the fetch failed) the stale cache.
func (m *Manager) registry(ctx context.Context, s Source, force, cacheOnly bool) (map[string]any, error) {
	var cached cachedRegistry
	var data map[string]any
	if raw, err := os.ReadFile(m.cachePath(s.Name)); err == nil && json.Unmarshal(raw, &cached) == nil {
		_ = json.Unmarshal(cached.Data, &data)
	}
	age := m.now().Sub(time.Unix(0, int64(cached.CachedAt*1e9)))
	if cacheOnly || (!force && data != nil && age < m.catalogTTL()) {
		if data == nil {
			return nil, fmt.Errorf("no cached %s registry", s.Name)
		}
		return data, nil
	}
	fetched, raw, err := m.fetchRegistry(ctx, s.URL)
	if err != nil {
		if data != nil {
			return data, nil
		}
		return nil, fmt.Errorf("the %s registry %s: %w", s.Name, s.URL, err)
	}
	now := float64(m.now().UnixNano()) / 1e9
	body, _ := json.Marshal(cachedRegistry{CachedAt: now, Data: raw})
	if err := writeFileAtomic(m.cachePath(s.Name), body); err != nil {
		return nil, err
	}
	return fetched, nil
}

func (m *Manager) fetchRegistry(ctx context.Context, url string) (map[string]any, json.RawMessage, error) {
	body, err := m.get(ctx, url, 8<<20)
	if err != nil {
		return nil, nil, err
	}
	var reg map[string]any
	if err := json.Unmarshal(body, &reg); err != nil || reg == nil {
		return nil, nil, errors.New("registry response must be an object")
	}
	return reg, body, nil
}

// get fetches url (nanobot's 15 s timeout), at most limit bytes.
func (m *Manager) get(ctx context.Context, url string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := m.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return body, nil
}

// Catalog merges the registries, by name case-insensitively, a later
// source's fields over an earlier's; updated is the newest meta.updated.
func (m *Manager) Catalog(ctx context.Context, force bool) (apps []App, updated string, err error) {
	return m.catalog(ctx, force, false)
}

// CachedCatalog is the catalog from the cache alone (no network).
func (m *Manager) CachedCatalog() []App {
	apps, _, _ := m.catalog(context.Background(), false, true)
	return apps
}

func (m *Manager) catalog(ctx context.Context, force, cacheOnly bool) ([]App, string, error) {
	merged := map[string]map[string]any{}
	updated := ""
	for _, s := range m.sources() {
		reg, err := m.registry(ctx, s, force, cacheOnly)
		if err != nil {
			if s.Required && !cacheOnly {
				return nil, "", err
			}
			continue
		}
		if meta, ok := reg["meta"].(map[string]any); ok {
			if u, ok := meta["updated"].(string); ok {
				updated = max(updated, u)
			}
		}
		rows, _ := reg["clis"].([]any)
		for _, r := range rows {
			row, ok := r.(map[string]any)
			name, _ := row["name"].(string)
			if !ok || name == "" {
				continue
			}
			key := strings.ToLower(name)
			entry := map[string]any{}
			source := s.Name
			if prev, ok := merged[key]; ok {
				entry = prev
				if was := prev["_source"].(string); was != s.Name {
					source = was + "+" + s.Name
				}
			}
			for k, v := range row {
				entry[k] = v
			}
			entry["_source"], entry["_raw_base"] = source, s.RawBase
			merged[key] = entry
		}
	}
	var apps []App
	for key := range merged { // sorted below
		raw, _ := json.Marshal(merged[key])
		var a App
		if json.Unmarshal(raw, &a) != nil {
			continue // a row whose fields have the wrong types is not an app we can act on
		}
		a.Source, a.rawBase = merged[key]["_source"].(string), merged[key]["_raw_base"].(string)
		apps = append(apps, a)
	}
	sort.SliceStable(apps, func(i, j int) bool { return strings.ToLower(apps[i].Name) < strings.ToLower(apps[j].Name) })
	return apps, updated, nil
}

// App is the catalog entry named name (case-insensitively).
func (m *Manager) App(ctx context.Context, name string, force bool) (App, error) {
	apps, _, err := m.Catalog(ctx, force)
	if err != nil {
		return App{}, fmt.Errorf("the CLI Apps catalog: %w", err)
	}
	for _, a := range apps {
		if strings.EqualFold(a.Name, name) {
			return a, nil
		}
	}
	return App{}, fmt.Errorf("CLI app '%s' not found", name)
}
