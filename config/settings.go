package config

import (
	"math"
	"os"
	"strconv"
	"time"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Knobs of a turn that come from the process's environment, not from
// config.json, with their defaults.
const (
	defaultLLMTimeout        = 300 * time.Second // NANOBOT_LLM_TIMEOUT_S; 0 lifts the limit (nanobot)
	defaultStreamIdleTimeout = 90 * time.Second  // NANOBOT_STREAM_IDLE_TIMEOUT_S
	defaultLLMMaxAttempts    = 5
	// persistentLLMMaxAttempts is providerRetryMode "persistent": nanobot keeps
	// retrying transient errors, giving up after 10 identical ones; each wait
	// is capped at a minute, as the model call's retry policy does.
	persistentLLMMaxAttempts = 11
	defaultToolTimeout       = 11 * time.Minute // exec's 600 s maximum, and a minute to report
	unlimitedLLMTimeout      = 24 * time.Hour
)

// TurnSettings are the knobs a turn fixes when it starts, so that replays
// see the same values whatever the config says later. A value the config
// leaves at zero takes nanobot's default.
func (c *Config) TurnSettings() protocol.Settings {
	def := defaultDefaults()
	d := c.Agents.Defaults
	m := c.ActiveModel()
	s := protocol.Settings{
		Model:                m.Model,
		MaxIterations:        positive(d.MaxToolIterations, def.MaxToolIterations),
		MaxTokens:            positive(m.MaxTokens, def.MaxTokens),
		ContextWindowTokens:  positive(m.ContextWindowTokens, def.ContextWindowTokens),
		Stream:               EnvBool("NANOBOT_STREAM", true),
		LLMTimeout:           EnvSeconds("NANOBOT_LLM_TIMEOUT_S", defaultLLMTimeout),
		LLMHeartbeat:         EnvSeconds("NANOBOT_LLM_HEARTBEAT_TIMEOUT_S", protocol.HeartbeatTimeout), // how soon a dead worker's call moves
		LLMMaxAttempts:       defaultLLMMaxAttempts,
		ToolTimeout:          defaultToolTimeout,
		ConsolidationRatio:   d.ConsolidationRatio,
		ApprovalTimeout:      time.Duration(positive(c.Tools.Approval.TimeoutS, 86400)) * time.Second,
		MaxRepeatedToolCalls: positive(d.MaxRepeatedToolCalls, def.MaxRepeatedToolCalls),
		Timezone:             d.Timezone,
		FailOnToolError:      d.FailOnToolError,
		SendMaxRetries:       int32(max(c.Channels.SendMaxRetries, 1)),
	}
	if c.Database.URL != "" { // state in PostgreSQL: turn workers may run on hosts without the workspace
		s.WorkspaceQueue = c.Instance().WorkspaceQueue()
	}
	if d.ContextBlockLimit != nil && *d.ContextBlockLimit > 0 {
		s.ContextBlockLimit = *d.ContextBlockLimit
	}
	if d.ProviderRetryMode == "persistent" {
		s.LLMMaxAttempts = persistentLLMMaxAttempts
	}
	if s.LLMTimeout == 0 {
		s.LLMTimeout = unlimitedLLMTimeout
	}
	if s.LLMHeartbeat == 0 {
		s.LLMHeartbeat = protocol.HeartbeatTimeout
	}
	if s.ConsolidationRatio <= 0 || s.ConsolidationRatio >= 1 {
		s.ConsolidationRatio = def.ConsolidationRatio
	}
	return s
}

// ModelTimeouts are the HTTP limits of a model client: the whole call
// (NANOBOT_LLM_TIMEOUT_S) and a stream that stops sending.
func ModelTimeouts() (call, streamIdle time.Duration) {
	return EnvSeconds("NANOBOT_LLM_TIMEOUT_S", defaultLLMTimeout), EnvSeconds("NANOBOT_STREAM_IDLE_TIMEOUT_S", defaultStreamIdleTimeout)
}

func positive(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// EnvSeconds reads a duration in seconds, decimals allowed ("2.5"), from the
// environment (0 = none).
func EnvSeconds(name string, def time.Duration) time.Duration {
	if s := os.Getenv(name); s != "" {
		if n, err := strconv.ParseFloat(s, 64); err == nil && n >= 0 && n <= math.MaxInt64/float64(time.Second) {
			return time.Duration(n * float64(time.Second))
		}
	}
	return def
}

// EnvBool reads a boolean from the environment.
func EnvBool(name string, def bool) bool {
	if v, err := strconv.ParseBool(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
