package workers

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
)

// defaultBases are the API bases of providers users configure by key alone.
var defaultBases = map[string]string{
	"openai":     "https://api.openai.com/v1",
	"openrouter": "https://openrouter.ai/api/v1",
	"deepseek":   "https://api.deepseek.com/v1",
	"ollama":     "http://127.0.0.1:11434/v1",
	"vllm":       "http://127.0.0.1:8000/v1",
	"lm_studio":  "http://127.0.0.1:1234/v1",
}

// gatewayProviders route "vendor/model" names and keep the prefix.
var gatewayProviders = map[string]bool{"openrouter": true, "custom": true, "vllm": true, "ollama": true, "lm_studio": true}

// Resolution says which provider serves the configured model, and why.
type Resolution struct {
	Provider string
	APIBase  string
	APIKey   string
	APIModel string
	Reason   string
}

// ErrNoModel tells the user exactly what to set.
var ErrNoModel = fmt.Errorf("no model provider is configured: set providers.<name>.apiKey " +
	"(and apiBase for a self-hosted or compatible server) in config.json, " +
	"or export OPENAI_API_KEY and OPENAI_BASE_URL")

// Resolve picks the provider for a model: an explicit provider, then the
// model's "vendor/" prefix, then the first configured provider.
func Resolve(cfg *config.Config, model, provider string) (Resolution, error) {
	usable := func(name string) (config.ProviderConfig, bool) {
		p, ok := cfg.Providers[name]
		return p, ok && (p.APIKey != "" || p.APIBase != "")
	}
	pick := func(name, reason string) (Resolution, error) {
		p, _ := cfg.Providers[name]
		base := p.APIBase
		if base == "" {
			base = defaultBases[name]
		}
		if base == "" {
			return Resolution{}, fmt.Errorf("provider %q has no apiBase and none is known for it: set providers.%s.apiBase", name, name)
		}
		apiModel := model
		if vendor, rest, ok := strings.Cut(model, "/"); ok && vendor == name && !gatewayProviders[name] {
			apiModel = rest
		}
		return Resolution{Provider: name, APIBase: base, APIKey: p.APIKey, APIModel: apiModel, Reason: reason}, nil
	}
	if provider != "" && provider != "auto" {
		if _, ok := usable(provider); !ok && defaultBases[provider] == "" {
			return Resolution{}, fmt.Errorf("agents.defaults.provider is %q but providers.%s has no apiKey or apiBase", provider, provider)
		}
		return pick(provider, "explicit agents.defaults.provider")
	}
	if vendor, _, ok := strings.Cut(model, "/"); ok {
		if _, ok := usable(vendor); ok {
			return pick(vendor, "model prefix "+vendor+"/")
		}
	}
	names := make([]string, 0, len(cfg.Providers))
	for name := range cfg.Providers {
		if _, ok := usable(name); ok {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { // openai first: OPENAI_* fallbacks land there
		if (names[i] == "openai") != (names[j] == "openai") {
			return names[i] == "openai"
		}
		return names[i] < names[j]
	})
	if len(names) == 0 {
		return Resolution{}, ErrNoModel
	}
	return pick(names[0], "first configured provider")
}

// configModels builds provider clients from the worker's config, once per model.
type configModels struct {
	cfg   *config.Config
	mu    sync.Mutex
	cache map[string]activities.Model
}

func newConfigModels(cfg *config.Config) *configModels {
	return &configModels{cfg: cfg, cache: map[string]activities.Model{}}
}

// Model implements activities.ModelSource.
func (m *configModels) Model(name string) (activities.Model, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cached, ok := m.cache[name]; ok {
		return cached, nil
	}
	active := m.cfg.ActiveModel()
	if name == "" {
		name = active.Model
	}
	res, err := Resolve(m.cfg, name, active.Provider)
	if err != nil {
		return activities.Model{}, err
	}
	p := m.cfg.Providers[res.Provider]
	client := providers.NewOpenAICompatible(providers.OpenAIOptions{
		BaseURL: res.APIBase, APIKey: res.APIKey, ExtraHeaders: p.ExtraHeaders, ExtraQuery: p.ExtraQuery,
		Timeout: envSeconds("NANOBOT_LLM_TIMEOUT_S", 300), StreamIdleTimeout: envSeconds("NANOBOT_STREAM_IDLE_TIMEOUT_S", 90),
	})
	temp := active.Temperature
	model := activities.Model{Provider: client, ProviderName: res.Provider, APIModel: res.APIModel, Temperature: &temp}
	m.cache[name] = model
	return model, nil
}

// envSeconds reads a duration in seconds from the environment (0 = none).
func envSeconds(name string, def int) time.Duration {
	v := def
	if s := os.Getenv(name); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			v = n
		}
	}
	return time.Duration(v) * time.Second
}
