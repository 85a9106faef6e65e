package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/nanobot-durable/nanobot/atomicfile"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Warning is a problem that doesn't stop loading, such as an unknown key.
type Warning struct {
	Source string // "config /path/config.json" or "env NANOBOT_…"
	Key    string // dotted key path as written, e.g. agents.defaults.maxTokns
	Msg    string
	// Unsupported marks a key this build reads but does not act on, set to
	// something other than nanobot's default (`nanobot status` lists them).
	Unsupported bool
}

func (w Warning) String() string { return joinMsg(w.Source, w.Key, w.Msg) }

// Error is a config value that cannot be used, located by file or env var and key path.
type Error struct {
	Source string // "config /path/config.json" or "env NANOBOT_…"
	Key    string // dotted key path; "" for whole-file problems
	Msg    string
	Err    error // underlying error, if any
}

func (e *Error) Error() string { return joinMsg(e.Source, e.Key, e.Msg) }

func (e *Error) Unwrap() error { return e.Err }

func joinMsg(src, key, msg string) string {
	if key == "" {
		return src + ": " + msg
	}
	return src + ": " + key + ": " + msg
}

func fileSource(path string) string { return "config " + path }

// Load reads the config file at path ("" = DefaultPath()) with the process
// environment's overrides. A missing file yields the defaults, Exists false.
func Load(path string) (*Config, []Warning, error) {
	return LoadWithEnv(path, os.Environ())
}

// maxConfigBytes bounds the config file: a config is a few KiB, a huge one is a mistake.
const maxConfigBytes = 4 << 20

// LoadWithEnv is Load with an explicit environment ("KEY=value" entries).
func LoadWithEnv(path string, environ []string) (*Config, []Warning, error) {
	if path == "" {
		path = defaultPath(environ)
	}
	path = ExpandHome(path)
	src := fileSource(path)
	cfg := Default()
	cfg.Path = path
	tree := map[string]any{}
	data, err := os.ReadFile(path)
	switch {
	case err == nil && len(data) > maxConfigBytes:
		return nil, nil, fmt.Errorf("config %s: the file is %d bytes; a config over %d bytes is not read (is it the right file?)", path, len(data), maxConfigBytes)
	case err == nil:
		cfg.Exists = true
		if tree, err = parseTree(src, data); err != nil {
			return nil, nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
		// nanobot runs on defaults until `onboard` writes a file.
	default:
		return nil, nil, fmt.Errorf("config %s: %w", path, err)
	}
	d := &decoder{}
	applyEnv(tree, environ, d)
	if err := d.decodeValue(src, "", tree, reflect.ValueOf(cfg).Elem(), false); err != nil {
		return nil, d.warnings, err
	}
	applyOpenAIEnv(cfg, environ)
	applyDatabaseEnv(cfg, environ, src)
	if err := cfg.resolveTimezone(src, tree, environ); err != nil {
		return nil, d.warnings, err
	}
	if err := cfg.validate(src); err != nil {
		return nil, d.warnings, err
	}
	if err := cfg.Database.validate(); err != nil {
		return nil, d.warnings, err
	}
	return cfg, d.warnings, nil
}

// parseTree parses the file into generic JSON, keeping numbers exact.
func parseTree(src string, data []byte) (map[string]any, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // editors on Windows add a BOM
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, se.Offset)
			return nil, &Error{Source: src, Msg: fmt.Sprintf("line %d, column %d: %v", line, col, se), Err: err}
		}
		return nil, &Error{Source: src, Msg: "invalid JSON", Err: err}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &Error{Source: src, Msg: "invalid JSON", Err: err}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, typeError(src, "", "an object at the top level", v)
	}
	return obj, nil
}

// lineCol turns a byte offset just past the offending byte into 1-based line and column.
func lineCol(data []byte, offset int64) (int, int) {
	p := int(min(max(offset-1, 0), int64(len(data))))
	before := data[:p]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := p - bytes.LastIndexByte(before, '\n')
	return line, col
}

// applyOpenAIEnv fills the openai provider from the OpenAI SDK's own variables.
func applyOpenAIEnv(c *Config, environ []string) {
	key, base := lookupEnv(environ, "OPENAI_API_KEY"), lookupEnv(environ, "OPENAI_BASE_URL")
	p, exists := c.Providers["openai"]
	changed := false
	if p.APIKey == "" && key != "" {
		p.APIKey, changed = key, true
	}
	if p.APIBase == "" && base != "" {
		p.APIBase, changed = base, true
	}
	if changed || exists {
		if c.Providers == nil {
			c.Providers = map[string]ProviderConfig{}
		}
		c.Providers["openai"] = p
	}
}

func lookupEnv(environ []string, name string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

var (
	retryModes       = []string{"standard", "persistent"}
	reasoningEfforts = []string{"low", "medium", "high", "xhigh", "max", "adaptive", "none"}
)

// validate checks what the schema constrains beyond types, as nanobot does.
func (c *Config) validate(src string) error {
	d := &c.Agents.Defaults
	if _, err := protocol.ParseInstance(c.Gateway.Instance); err != nil {
		return &Error{Source: src, Key: "gateway.instance", Msg: err.Error()}
	}
	if err := c.Transcription.validate(src); err != nil {
		return err
	}
	if l := c.Channels.TranscriptionLanguage; l != "" && !languageCode.MatchString(l) {
		return &Error{Source: src, Key: "channels.transcriptionLanguage", Msg: fmt.Sprintf("%q is not an ISO-639 code of 2 or 3 lower-case letters", l)}
	}
	if d.ModelPreset != "" {
		if _, ok := c.ModelPresets[d.ModelPreset]; !ok {
			return &Error{Source: src, Key: "agents.defaults.modelPreset", Msg: fmt.Sprintf("no preset %q in modelPresets", d.ModelPreset)}
		}
	}
	for i, f := range d.FallbackModels {
		key := fmt.Sprintf("agents.defaults.fallbackModels[%d]", i)
		if f.Preset != "" {
			if _, ok := c.ModelPresets[f.Preset]; !ok {
				return &Error{Source: src, Key: key, Msg: fmt.Sprintf("no preset %q in modelPresets", f.Preset)}
			}
		}
		if err := checkEffort(src, key+".reasoningEffort", f.ReasoningEffort); err != nil {
			return err
		}
	}
	if r := d.ConsolidationRatio; r < 0.1 || r > 0.95 {
		return &Error{Source: src, Key: "agents.defaults.consolidationRatio", Msg: fmt.Sprintf("%g is outside 0.1–0.95", r)}
	}
	if m := c.Gateway.RestartMode; m != "" && m != "auto" && m != "exec" && m != "spawn" {
		return &Error{Source: src, Key: "gateway.restartMode", Msg: fmt.Sprintf("%q is not one of auto, exec, spawn", m)}
	}
	for _, r := range []struct {
		key       string
		n, lo, hi int
	}{
		{"tools.cliApps.installTimeout", c.Tools.CLIApps.InstallTimeout, 1, 3600},
		{"tools.cliApps.runTimeout", c.Tools.CLIApps.RunTimeout, 1, 600},
		{"tools.cliApps.catalogTtlSeconds", c.Tools.CLIApps.CatalogTTLSeconds, 60, 86_400},
	} {
		if r.n < r.lo || r.n > r.hi {
			return &Error{Source: src, Key: r.key, Msg: fmt.Sprintf("%d is outside %d..%d", r.n, r.lo, r.hi)}
		}
	}
	if n := c.Tools.ImageGeneration.MaxImagesPerTurn; n < 1 || n > 8 {
		return &Error{Source: src, Key: "tools.imageGeneration.maxImagesPerTurn", Msg: fmt.Sprintf("%d is outside 1..8", n)}
	}
	if d := c.Tools.ImageGeneration.SaveDir; d == "" || filepath.IsAbs(d) || d == ".." || strings.HasPrefix(filepath.Clean(d), "..") {
		return &Error{Source: src, Key: "tools.imageGeneration.saveDir", Msg: fmt.Sprintf("%q must be a relative path inside the workspace", d)}
	}
	if n := c.Tools.MaxSessionMessagesPerMinute; n < 1 {
		return &Error{Source: src, Key: "tools.maxSessionMessagesPerMinute", Msg: fmt.Sprintf("%d is below 1", n)}
	}
	if n := c.Channels.SendMaxRetries; n < 0 || n > 10 {
		return &Error{Source: src, Key: "channels.sendMaxRetries", Msg: fmt.Sprintf("%d is outside 0–10", n)}
	}
	if l := d.ContextBlockLimit; l != nil && *l < 0 {
		return &Error{Source: src, Key: "agents.defaults.contextBlockLimit", Msg: fmt.Sprintf("%d is negative (null: the input budget)", *l)}
	}
	if !slices.Contains(retryModes, d.ProviderRetryMode) {
		return &Error{Source: src, Key: "agents.defaults.providerRetryMode", Msg: fmt.Sprintf("%q is not one of %s", d.ProviderRetryMode, strings.Join(retryModes, ", "))}
	}
	if err := checkEffort(src, "agents.defaults.reasoningEffort", d.ReasoningEffort); err != nil {
		return err
	}
	for name, p := range c.ModelPresets {
		if err := checkEffort(src, "modelPresets."+name+".reasoningEffort", p.ReasoningEffort); err != nil {
			return err
		}
	}
	if n := c.Tools.Exec.SessionIdleMinutes; n < 1 {
		return &Error{Source: src, Key: "tools.exec.sessionIdleMinutes", Msg: fmt.Sprintf("%d: want minutes ≥ 1 (default 30)", n)}
	}
	if err := c.Tools.Approval.check(src); err != nil {
		return err
	}
	return c.validateSandbox(src)
}

func checkEffort(src, key string, effort *string) error {
	if effort == nil || slices.Contains(reasoningEfforts, *effort) {
		return nil
	}
	return &Error{Source: src, Key: key, Msg: fmt.Sprintf("%q is not one of %s", *effort, strings.Join(reasoningEfforts, ", "))}
}

// Save writes c as indented camelCase JSON, atomically, readable only by
// the owner because it holds API keys.
func Save(path string, c *Config) error {
	path = ExpandHome(path)
	if c == nil {
		return fmt.Errorf("config %s: nothing to save", path)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("config %s: encode: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if err := atomicfile.Write(path, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// DefaultPath is $NANOBOT_CONFIG, else ~/.nanobot/config.json.
func DefaultPath() string { return defaultPath(os.Environ()) }

func defaultPath(environ []string) string {
	if p := lookupEnv(environ, envConfigVar); p != "" {
		return ExpandHome(p)
	}
	return filepath.Join(Home(), "config.json")
}

// ExpandHome replaces a leading "~" with the user's home directory.
func ExpandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}

// ConfigDir is the directory holding the config file; sessions and the
// Temporal database live beside it.
func ConfigDir(path string) string {
	dir := filepath.Dir(ExpandHome(path))
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// WorkspacePath is the workspace directory, home-expanded and absolute.
func (d *Defaults) WorkspacePath() string {
	p := d.Workspace
	if p == "" {
		p = defaultDefaults().Workspace
	}
	p = ExpandHome(p)
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// RestrictToWorkspaceOrDefault reports whether file and exec tools are
// confined to the workspace; this project confines them unless told not to.
func (t *Tools) RestrictToWorkspaceOrDefault() bool {
	return t.RestrictToWorkspace == nil || *t.RestrictToWorkspace
}

// Instance is this nanobot's name on its Temporal namespace (validated at load).
func (c *Config) Instance() protocol.Instance {
	inst, err := protocol.ParseInstance(c.Gateway.Instance)
	if err != nil {
		return protocol.DefaultInstance
	}
	return inst
}

// ActiveModel is the model the agent runs with: the preset named by
// modelPreset when set, else agents.defaults' own model fields.
func (c *Config) ActiveModel() ModelPreset {
	d := &c.Agents.Defaults
	if p, ok := c.ModelPresets[d.ModelPreset]; ok && d.ModelPreset != "" {
		return p
	}
	return ModelPreset{
		Model:               d.Model,
		Provider:            d.Provider,
		MaxTokens:           d.MaxTokens,
		ContextWindowTokens: d.ContextWindowTokens,
		Temperature:         d.Temperature,
		ReasoningEffort:     d.ReasoningEffort,
	}
}

// Fallbacks resolves fallbackModels in order; an inline entry's unset
// optional fields take the active model's values. Unknown presets are skipped.
func (c *Config) Fallbacks() []ModelPreset {
	active := c.ActiveModel()
	var out []ModelPreset
	for _, f := range c.Agents.Defaults.FallbackModels {
		if f.Preset != "" {
			if p, ok := c.ModelPresets[f.Preset]; ok {
				out = append(out, p)
			}
			continue
		}
		m := active
		m.Model, m.Provider = f.Model, f.Provider
		if f.MaxTokens != nil {
			m.MaxTokens = *f.MaxTokens
		}
		if f.ContextWindowTokens != nil {
			m.ContextWindowTokens = *f.ContextWindowTokens
		}
		if f.Temperature != nil {
			m.Temperature = *f.Temperature
		}
		if f.ReasoningEffort != nil {
			m.ReasoningEffort = f.ReasoningEffort
		}
		out = append(out, m)
	}
	return out
}

// KeyError is the error for a key of this config's file whose value is
// wrong, for the channel packages that check their own blocks.
func (c *Config) KeyError(key, msg string) error {
	return &Error{Source: fileSource(c.Path), Key: key, Msg: msg}
}
