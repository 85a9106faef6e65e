package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/nanobot-durable/nanobot/config"
)

// ErrNoModel is returned when no provider could serve the model; every
// "not configured" error from Resolve matches it with errors.Is.
var ErrNoModel = errors.New("no model provider is configured: set providers.<name>.apiKey " +
	"(and apiBase for a self-hosted or compatible server) in config.json, " +
	"or export OPENAI_API_KEY and OPENAI_BASE_URL")

// ConfigError says exactly which setting is missing for a chosen provider.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

// Is makes a ConfigError match ErrNoModel: callers treat both as "set up a provider".
func (e *ConfigError) Is(target error) bool { return target == ErrNoModel }

// Resolution says which provider serves a model, where, and why.
type Resolution struct {
	Spec         Spec
	ProviderName string // the registry (or providers.<name>) name serving the model
	ConfigName   string // the providers.<name> entry the credentials came from
	APIBase      string
	APIKey       string `json:"-"`
	KeySource    string // "providers.deepseek.apiKey", "env DEEPSEEK_API_KEY" or ""
	Model        string // the configured model name
	APIModel     string // the name sent on the wire
	Reason       string
	Config       config.ProviderConfig `json:"-"` // the entry's extras (headers, body, query, proxy)
}

// String is the log-safe description: the key is never printed.
func (r Resolution) String() string { return r.Redacted() }

// Redacted describes the resolution without the API key.
func (r Resolution) Redacted() string {
	key := "no key"
	if r.APIKey != "" {
		key = "key from " + r.KeySource + " (" + keyFingerprint(r.APIKey) + ")"
	}
	return fmt.Sprintf("%s model %q at %s, %s (%s)", r.ProviderName, r.APIModel, r.APIBase, key, r.Reason)
}

// LogValue keeps the key out of slog output.
func (r Resolution) LogValue() slog.Value {
	return slog.GroupValue(slog.String("provider", r.ProviderName), slog.String("model", r.Model),
		slog.String("api_model", r.APIModel), slog.String("api_base", r.APIBase),
		slog.Bool("key", r.APIKey != ""), slog.String("reason", r.Reason))
}

// keyFingerprint identifies a key in logs without revealing it.
func keyFingerprint(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:4])
}

// Resolve picks the provider for a model preset using the process environment.
func Resolve(cfg *config.Config, preset config.ModelPreset) (Resolution, error) {
	return ResolveEnv(cfg, preset, os.Getenv)
}

// ResolveEnv is Resolve with an injectable environment lookup. "auto"
// resolves as nanobot does: explicit provider, then the model's "vendor/"
// prefix or a keyword in its name, then an API key prefix, then an apiBase
// keyword, then a local server with an apiBase, then the first configured
// provider (gateways first).
func ResolveEnv(cfg *config.Config, preset config.ModelPreset, getenv func(string) string) (Resolution, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	r := resolver{entries: map[string]config.ProviderConfig{}, getenv: getenv}
	if cfg != nil {
		for name, p := range cfg.Providers {
			r.entries[NormalizeName(name)] = p
		}
	}
	if p := NormalizeName(preset.Provider); p != "" && p != "auto" {
		return r.explicit(p, preset.Model)
	}
	return r.auto(preset.Model)
}

type resolver struct {
	entries map[string]config.ProviderConfig
	getenv  func(string) string
}

// specFor is the registry spec, or a dynamic one for a configured custom name.
func (r *resolver) specFor(name string) (Spec, bool) {
	if s, ok := LookupSpec(name); ok {
		return s, true
	}
	if _, ok := r.entries[name]; ok {
		return dynamicSpec(name), true
	}
	return Spec{}, false
}

// key is the entry's apiKey, else the spec's environment variable.
func (r *resolver) key(entry string, s Spec) (key, source string) {
	if k := r.entries[entry].APIKey; k != "" {
		return k, "providers." + entry + ".apiKey"
	}
	if s.EnvKey != "" {
		if k := r.getenv(s.EnvKey); k != "" {
			return k, "env " + s.EnvKey
		}
	}
	return "", ""
}

// configured: a key or an apiBase is set, or a local server has a default base.
func (r *resolver) configured(s Spec) bool {
	k, _ := r.key(s.Name, s)
	return k != "" || r.entries[s.Name].APIBase != "" || (s.IsLocal && s.DefaultAPIBase != "")
}

// build fills a Resolution for spec s using the credentials of entry.
func (r *resolver) build(s Spec, entry, model, reason string) (Resolution, error) {
	p := r.entries[entry]
	if p.ThinkingStyle != "" {
		s.ThinkingStyle = ThinkingStyle(p.ThinkingStyle)
	}
	key, source := r.key(entry, s)
	if key == "" && entry != s.Name {
		key, source = r.key(s.Name, s)
	}
	base := p.APIBase
	if base == "" {
		base = s.DefaultAPIBase
	}
	if base == "" {
		return Resolution{}, &ConfigError{Msg: fmt.Sprintf(
			"provider %q has no apiBase and none is known for it: set providers.%s.apiBase in config.json", s.Name, entry)}
	}
	if err := checkAPIType(s, entry, p.APIType); err != nil {
		return Resolution{}, err
	}
	return Resolution{
		Spec: s, ProviderName: s.Name, ConfigName: entry, APIBase: base, APIKey: key, KeySource: source,
		Model: model, APIModel: apiModel(s, model), Reason: reason, Config: p,
	}, nil
}

func (r *resolver) explicit(name, model string) (Resolution, error) {
	s, ok := r.specFor(name)
	if !ok {
		return Resolution{}, &ConfigError{Msg: fmt.Sprintf(
			"provider %q is not a known provider: set providers.%s.apiBase (and apiKey) in config.json to use it as an OpenAI-compatible server",
			name, name)}
	}
	if !r.configured(s) {
		hint := "set providers." + name + ".apiKey in config.json"
		if s.EnvKey != "" {
			hint += " or export " + s.EnvKey
		}
		if s.DefaultAPIBase == "" {
			hint = "set providers." + name + ".apiBase (and apiKey if the server needs one) in config.json"
		}
		return Resolution{}, &ConfigError{Msg: fmt.Sprintf("provider %q is selected but not configured: %s", name, hint)}
	}
	return r.build(s, name, model, "explicit provider")
}

func (r *resolver) auto(model string) (Resolution, error) {
	lower := strings.ToLower(model)
	if vendor, _, ok := strings.Cut(lower, "/"); ok {
		if s, ok := r.specFor(NormalizeName(vendor)); ok && r.configured(s) {
			return r.build(s, s.Name, model, "model prefix '"+vendor+"/'")
		}
	}
	folded := strings.ReplaceAll(lower, "-", "_")
	for _, s := range registry {
		for _, kw := range s.Keywords {
			if (strings.Contains(lower, kw) || strings.Contains(folded, strings.ReplaceAll(kw, "-", "_"))) && r.configured(s) {
				return r.build(s, s.Name, model, "keyword '"+kw+"' in model name")
			}
		}
	}
	names := r.entryOrder()
	for _, s := range registry {
		if s.DetectByKeyPrefix == "" {
			continue
		}
		for _, entry := range append([]string{s.Name}, names...) {
			es, _ := r.specFor(entry)
			if k, _ := r.key(entry, es); strings.HasPrefix(k, s.DetectByKeyPrefix) {
				return r.build(s, entry, model, "key prefix "+s.DetectByKeyPrefix)
			}
		}
	}
	for _, s := range registry {
		if s.DetectByBaseKeyword == "" {
			continue
		}
		for _, entry := range names {
			if strings.Contains(strings.ToLower(r.entries[entry].APIBase), s.DetectByBaseKeyword) {
				return r.build(s, entry, model, "base URL contains '"+s.DetectByBaseKeyword+"'")
			}
		}
	}
	for _, s := range registry {
		if s.IsLocal && r.entries[s.Name].APIBase != "" {
			return r.build(s, s.Name, model, "local provider with apiBase")
		}
	}
	for _, entry := range names {
		s, _ := r.specFor(entry)
		k, _ := r.key(entry, s)
		if k != "" || r.entries[entry].APIBase != "" {
			return r.build(s, entry, model, "first configured provider")
		}
	}
	for _, s := range registry {
		if k, _ := r.key(s.Name, s); k != "" && s.DefaultAPIBase != "" {
			return r.build(s, s.Name, model, "first configured provider")
		}
	}
	return Resolution{}, ErrNoModel
}

// entryOrder lists config entries in registry order (gateways first), then
// unknown custom names sorted, so "first configured" is deterministic.
func (r *resolver) entryOrder() []string {
	out := make([]string, 0, len(r.entries))
	for _, s := range registry {
		if _, ok := r.entries[s.Name]; ok {
			out = append(out, s.Name)
		}
	}
	var extra []string
	for name := range r.entries {
		if _, known := LookupSpec(name); !known {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// apiModel is the wire name: gateways that want bare names get the last
// segment; a leading "<provider>/" naming the serving provider itself is dropped.
func apiModel(s Spec, model string) string {
	if s.StripModelPrefix {
		if i := strings.LastIndexByte(model, '/'); i >= 0 {
			return model[i+1:]
		}
		return model
	}
	if vendor, rest, ok := strings.Cut(model, "/"); ok && NormalizeName(vendor) == s.Name && rest != "" {
		return rest
	}
	return model
}
