package workers

import (
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
)

// configModels builds model clients from the worker's own config, so API
// keys never enter workflow history; the factory caches them per provider
// signature.
type configModels struct {
	cfg *config.Config
	f   *providers.Factory
}

func newConfigModels(cfg *config.Config, log *slog.Logger) *configModels {
	return &configModels{cfg: cfg, f: &providers.Factory{
		Timeout:           envSeconds("NANOBOT_LLM_TIMEOUT_S", 300),
		StreamIdleTimeout: envSeconds("NANOBOT_STREAM_IDLE_TIMEOUT_S", 90),
		Log:               log,
	}}
}

// Model implements activities.ModelSource.
func (m *configModels) Model(name string) (activities.Model, error) {
	pm, err := m.f.Model(m.cfg, name)
	if err != nil {
		return activities.Model{}, err
	}
	return activities.Model{Provider: pm.Provider, ProviderName: pm.ProviderName, APIModel: pm.APIModel, Temperature: pm.Temperature}, nil
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
