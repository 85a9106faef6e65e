package workers

import (
	"os"
	"strconv"
	"time"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Settings turns the config into the knobs a turn fixes when it starts.
func Settings(cfg *config.Config) protocol.Settings {
	m := cfg.ActiveModel()
	s := protocol.Settings{
		Model:               m.Model,
		MaxIterations:       cfg.Agents.Defaults.MaxToolIterations,
		MaxTokens:           m.MaxTokens,
		ContextWindowTokens: m.ContextWindowTokens,
		Stream:              envBool("NANOBOT_STREAM", true),
		LLMTimeout:          envSeconds("NANOBOT_LLM_TIMEOUT_S", 300),
		LLMHeartbeat:        envSeconds("NANOBOT_LLM_HEARTBEAT_TIMEOUT_S", 10),
		ConsolidationRatio:  cfg.Agents.Defaults.ConsolidationRatio,
	}
	if s.LLMTimeout == 0 {
		s.LLMTimeout = 24 * time.Hour // nanobot: 0 disables the limit
	}
	return s.WithDefaults()
}

func envBool(name string, def bool) bool {
	if v, err := strconv.ParseBool(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
