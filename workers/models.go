package workers

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
)

// configModels builds model clients from the worker's own config, so API
// keys never enter workflow history. The factory caches clients per
// provider signature: a reloaded config rebuilds them only when a provider
// setting changed.
type configModels struct {
	mu  sync.RWMutex
	cfg *config.Config
	f   *providers.Factory
}

func newConfigModels(cfg *config.Config, log *slog.Logger) *configModels {
	call, idle := config.ModelTimeouts()
	return &configModels{cfg: cfg, f: &providers.Factory{Timeout: call, StreamIdleTimeout: idle, Log: log}}
}

// Config is the config the models are built from.
func (m *configModels) Config() *config.Config {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.cfg
}

// Model implements activities.ModelSource.
func (m *configModels) Model(name string) (activities.Model, error) {
	pm, err := m.f.Model(m.Config(), name)
	if err != nil {
		return activities.Model{}, err
	}
	return activities.Model{Provider: pm.Provider, ProviderName: pm.ProviderName, APIModel: pm.APIModel, Temperature: pm.Temperature}, nil
}

// reload swaps in a new config; it reports whether model clients were rebuilt.
func (m *configModels) reload(cfg *config.Config) bool {
	m.mu.Lock()
	m.cfg = cfg
	m.mu.Unlock()
	return m.f.Reload(cfg)
}

// watchConfig reloads the config file when it changes, until ctx ends. A
// broken file is reported and the last good config stays.
func (m *configModels) watchConfig(ctx context.Context, every time.Duration, log *slog.Logger, onReload func(*config.Config)) {
	path := m.Config().Path
	last := modTime(path)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		mt := modTime(path)
		if mt.Equal(last) {
			continue
		}
		last = mt
		cfg, _, err := config.Load(path)
		if err != nil {
			log.Error("config changed but cannot be read; keeping the previous one", "error", err)
			continue
		}
		log.Info("config reloaded", "path", path, "model_clients_rebuilt", m.reload(cfg))
		if onReload != nil {
			onReload(cfg)
		}
	}
}

func modTime(path string) time.Time {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}
