package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/config"
)

// Model is a ready-to-call model built from config.
type Model struct {
	// Provider is a FallbackProvider when fallbackModels are configured.
	// It names the model on the wire itself and fills Temperature, MaxTokens
	// and the reasoning shape when the request leaves them unset.
	Provider            Provider `json:"-"`
	Name                string   // the configured model name
	ProviderName        string
	APIModel            string
	Temperature         *float64
	MaxTokens           int
	ContextWindowTokens int
	ReasoningEffort     *string
	Resolution          Resolution   // log it with %v or slog: the key is redacted
	Fallbacks           []Resolution // the fallback models that resolved, in order
	Warnings            []string     // fallback models skipped because they did not resolve
}

// LogValue logs a model by name and redacted resolution.
func (m Model) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", m.Name), slog.Any("resolution", m.Resolution),
		slog.Int("fallbacks", len(m.Fallbacks)))
}

// Factory builds model clients from config and keeps them, with their
// circuit breakers, until the provider signature changes.
type Factory struct {
	Getenv            func(string) string // nil = os.Getenv
	Timeout           time.Duration       // see OpenAIOptions.Timeout
	StreamIdleTimeout time.Duration       // see OpenAIOptions.StreamIdleTimeout
	HTTPClient        *http.Client        // nil = a plain client; replaced by one with the entry's proxy when set
	Now               func() time.Time    // clock for fallback circuits; nil = time.Now
	Log               *slog.Logger        // fallback events; nil = silent

	mu    sync.Mutex
	sig   string
	cache map[string]Model
}

// Reload drops every built client when cfg's signature differs from the one
// they were built for, and reports whether it did.
func (f *Factory) Reload(cfg *config.Config) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reload(cfg)
}

func (f *Factory) reload(cfg *config.Config) bool {
	sig := Signature(cfg) + envSignature(f.getenv)
	if sig == f.sig && f.cache != nil {
		return false
	}
	f.sig, f.cache = sig, map[string]Model{}
	return true
}

// Model returns the client for a model: "" is the active model
// (agents.defaults or its modelPreset), a name PresetFor knows is that
// preset, and any other name is the active model's settings with that model.
func (f *Factory) Model(cfg *config.Config, name string) (Model, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reload(cfg)
	if m, ok := f.cache[name]; ok {
		return m, nil
	}
	m, err := f.build(cfg, presetForModel(cfg, name))
	if err != nil {
		return Model{}, err
	}
	f.cache[name] = m
	return m, nil
}

func presetForModel(cfg *config.Config, name string) config.ModelPreset {
	active := cfg.ActiveModel()
	if p, ok := PresetFor(cfg, name); ok {
		return p
	}
	if name != "" {
		active.Model = name
	}
	return active
}

func (f *Factory) build(cfg *config.Config, preset config.ModelPreset) (Model, error) {
	res, err := ResolveEnv(cfg, preset, f.getenv)
	if err != nil {
		return Model{}, err
	}
	primary := f.bind(res, preset)
	m := Model{
		Provider: primary, Name: preset.Model, ProviderName: res.ProviderName, APIModel: res.APIModel,
		Temperature: primary.temperature, MaxTokens: preset.MaxTokens, ContextWindowTokens: preset.ContextWindowTokens,
		ReasoningEffort: preset.ReasoningEffort, Resolution: res,
	}
	var fallbacks []Candidate
	for _, fb := range cfg.Fallbacks() {
		fres, err := ResolveEnv(cfg, fb, f.getenv)
		if err != nil {
			m.Warnings = append(m.Warnings, fmt.Sprintf("fallback model %q skipped: %v", fb.Model, err))
			continue
		}
		b := f.bind(fres, fb)
		m.Fallbacks = append(m.Fallbacks, fres)
		fallbacks = append(fallbacks, Candidate{Model: fb.Model, APIModel: fres.APIModel, ProviderName: fres.ProviderName,
			Provider: b, Temperature: b.temperature, MaxTokens: fb.MaxTokens, ReasoningEffort: fb.ReasoningEffort})
	}
	if len(fallbacks) > 0 {
		m.Provider = &FallbackProvider{
			Primary:   Candidate{Model: preset.Model, APIModel: res.APIModel, ProviderName: res.ProviderName, Provider: primary},
			Fallbacks: fallbacks, Now: f.Now, Log: f.Log,
		}
	}
	return m, nil
}

// bind builds the client for one resolved model.
func (f *Factory) bind(res Resolution, preset config.ModelPreset) *bound {
	headers := map[string]string{}
	for k, v := range res.Spec.Headers {
		headers[k] = v
	}
	for k, v := range res.Config.ExtraHeaders {
		headers[k] = v // the user's headers override the spec's defaults
	}
	client := f.client(res, headers)
	temp := preset.Temperature
	return &bound{client: client, res: res, temperature: &temp, maxTokens: preset.MaxTokens, effort: preset.ReasoningEffort}
}

// httpClient honours providers.<name>.proxy; an unparsable proxy is ignored
// rather than failing every call.
func (f *Factory) httpClient(proxy string) *http.Client {
	if proxy == "" {
		return f.HTTPClient
	}
	u, err := url.Parse(proxy)
	if err != nil || u.Host == "" {
		return f.HTTPClient
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = http.ProxyURL(u)
	return &http.Client{Transport: t}
}

func (f *Factory) getenv(name string) string {
	if f.Getenv != nil {
		return f.Getenv(name)
	}
	return os.Getenv(name)
}

// Signature fingerprints everything in cfg that changes which clients are
// built or how they call (nanobot's provider_signature): the active model,
// presets, fallbacks and every provider entry. Keys and headers only enter
// hashed; the result is a hex digest, safe to log.
func Signature(cfg *config.Config) string {
	if cfg == nil {
		return ""
	}
	type entry struct {
		KeyHash       string
		APIBase       string
		APIType       string
		ExtraHeaders  map[string]string
		ExtraBody     map[string]any
		ExtraQuery    map[string]string
		Proxy         string
		ThinkingStyle string
		PromptCaching *bool
	}
	v := struct {
		Active    config.ModelPreset
		Presets   map[string]config.ModelPreset
		Fallbacks []config.ModelPreset
		Providers map[string]entry
	}{Active: cfg.ActiveModel(), Presets: cfg.ModelPresets, Fallbacks: cfg.Fallbacks(), Providers: map[string]entry{}}
	for name, p := range cfg.Providers {
		keyHash := sha256.Sum256([]byte(p.APIKey))
		v.Providers[NormalizeName(name)] = entry{hex.EncodeToString(keyHash[:]), p.APIBase, p.APIType, p.ExtraHeaders,
			p.ExtraBody, p.ExtraQuery, p.Proxy, p.ThinkingStyle, p.PromptCaching}
	}
	b, err := json.Marshal(v) // map keys marshal sorted, so equal configs give equal bytes
	if err != nil {
		b = []byte(fmt.Sprintf("%#v", v))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// envSignature covers the API-key variables Resolve may read.
func envSignature(getenv func(string) string) string {
	h := sha256.New()
	for _, s := range registry {
		if s.EnvKey != "" {
			fmt.Fprintf(h, "%s=%s\n", s.EnvKey, getenv(s.EnvKey))
		}
	}
	return ":" + hex.EncodeToString(h.Sum(nil)[:8])
}
