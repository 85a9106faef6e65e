package config

import (
	"os"
	"strconv"
	"time"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Knobs of a turn that come from the process's environment, not from
// config.json, with their defaults.
const (
	defaultLLMTimeoutS        = 300 // NANOBOT_LLM_TIMEOUT_S; 0 lifts the limit (nanobot)
	defaultLLMHeartbeatS      = 10  // NANOBOT_LLM_HEARTBEAT_TIMEOUT_S: how soon a dead worker's call moves
	defaultStreamIdleTimeoutS = 90  // NANOBOT_STREAM_IDLE_TIMEOUT_S
	defaultLLMMaxAttempts     = 5
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
		LLMTimeout:           EnvSeconds("NANOBOT_LLM_TIMEOUT_S", defaultLLMTimeoutS),
		LLMHeartbeat:         EnvSeconds("NANOBOT_LLM_HEARTBEAT_TIMEOUT_S", defaultLLMHeartbeatS),
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
		s.LLMHeartbeat = defaultLLMHeartbeatS * time.Second
	}
	if s.ConsolidationRatio <= 0 || s.ConsolidationRatio >= 1 {
		s.ConsolidationRatio = def.ConsolidationRatio
	}
	return s
}

// ModelTimeouts are the HTTP limits of a model client: the whole call
// (NANOBOT_LLM_TIMEOUT_S) and a stream that stops sending.
func ModelTimeouts() (call, streamIdle time.Duration) {
	return EnvSeconds("NANOBOT_LLM_TIMEOUT_S", defaultLLMTimeoutS), EnvSeconds("NANOBOT_STREAM_IDLE_TIMEOUT_S", defaultStreamIdleTimeoutS)
}

func positive(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// EnvSeconds reads a duration in whole seconds from the environment (0 = none).
func EnvSeconds(name string, def int) time.Duration {
	v := def
	if s := os.Getenv(name); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			v = n
		}
	}
	return time.Duration(v) * time.Second
}

// EnvBool reads a boolean from the environment.
func EnvBool(name string, def bool) bool {
	if v, err := strconv.ParseBool(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
