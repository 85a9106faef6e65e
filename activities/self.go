package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/cron"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
)

// scratchpadKey is where a session's my-tool notes live in its metadata.
const scratchpadKey = "my_scratchpad"

// Self is tools.Self: the agent's config as this worker has it, the
// session's own choices, the tools, channels and schedules. Secrets stay
// out: no key, token or URL with credentials is ever put in the facts.
type Self struct {
	journal
	config func() *config.Config
	// Tools names the tools the worker offers (set once the registry exists).
	Tools func() []string
	jobs  tools.CronJobs
}

var _ tools.Self = (*Self)(nil)

// NewSelf is the my tool's view of the agent; jobs may be nil (no Temporal).
func NewSelf(store session.Store, cfg func() *config.Config, jobs tools.CronJobs) *Self {
	return &Self{journal: journal{store: store}, config: cfg, jobs: jobs}
}

// myOverview is the order check shows the facts in (nanobot's first).
var myOverview = []string{"max_iterations", "context_window_tokens", "model", "model_preset", "provider", "max_tokens",
	"workspace", "provider_retry_mode", "max_tool_result_chars", "timezone", "exec_config", "web_config",
	"tools", "channels", "schedules", "request", "_last_usage", "scratchpad"}

func (s *Self) Facts(ctx context.Context, env tools.Env) ([]string, map[string]any, error) {
	cfg := currentConfig(s.config)
	sess, err := s.load(ctx, env.SessionKey)
	if err != nil {
		return nil, nil, err
	}
	settings := cfg.TurnSettings()
	d := cfg.Agents.Defaults
	active, preset := cfg.ActiveModel(), providers.DefaultPresetName
	if name := sess.ModelPreset(); name != "" {
		if p, ok := providers.PresetFor(cfg, name); ok {
			active, preset = p, name
		}
	}
	provider := "none"
	if res, err := providers.Resolve(cfg, active); err == nil {
		provider = res.ProviderName
	}
	var names []string
	if s.Tools != nil {
		names = s.Tools()
	}
	usage, _ := sess.Metadata["usage"].(map[string]any)
	scratch, _ := sess.Metadata[scratchpadKey].(map[string]any)
	facts := map[string]any{
		"max_iterations":        settings.MaxIterations,
		"context_window_tokens": orDefault(active.ContextWindowTokens, settings.ContextWindowTokens),
		"model":                 active.Model,
		"model_preset":          preset,
		"provider":              provider,
		"max_tokens":            orDefault(active.MaxTokens, settings.MaxTokens),
		"workspace":             d.WorkspacePath(),
		"provider_retry_mode":   d.ProviderRetryMode,
		"max_tool_result_chars": d.MaxToolResultChars,
		"timezone":              d.Timezone,
		"exec_config": map[string]any{"enable": cfg.Tools.Exec.Enable, "timeout": cfg.Tools.Exec.Timeout,
			"sandbox": string(cfg.Tools.Exec.SandboxMode())},
		"web_config":  map[string]any{"enable": cfg.Tools.Web.Enable, "search_provider": cfg.Tools.Web.Search.Provider},
		"tools":       names,
		"channels":    channels.EnabledNames(cfg),
		"schedules":   s.schedules(ctx, cfg, env.SessionKey),
		"request":     map[string]any{"channel": env.Route.Channel, "chat_id": env.Route.ChatID, "sender_id": env.Route.SenderID},
		"_last_usage": map[string]any{"prompt_tokens": usage["prompt_tokens"], "completion_tokens": usage["completion_tokens"]},
		"scratchpad":  scratch,
	}
	order := myOverview
	if len(scratch) == 0 {
		order = order[:len(order)-1]
		delete(facts, "scratchpad")
	}
	return order, facts, nil
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// schedules are the heartbeat, Dream and this session's cron jobs.
func (s *Self) schedules(ctx context.Context, cfg *config.Config, sessionKey string) map[string]any {
	hb, dream := cfg.Gateway.Heartbeat, cfg.Agents.Defaults.Dream
	out := map[string]any{
		"heartbeat": map[string]any{"enabled": hb.Enabled, "interval_s": hb.IntervalS},
		"dream":     map[string]any{"enabled": dream.Enabled, "interval_h": dream.IntervalH, "cron": dream.Cron},
	}
	if s.jobs == nil {
		out["cron"] = "unavailable in this process"
		return out
	}
	jobs, err := s.jobs.List(ctx)
	if err != nil {
		out["cron"] = "unavailable: " + err.Error()
		return out
	}
	mine := []any{}
	for _, j := range jobs {
		if j.SessionKey == sessionKey {
			mine = append(mine, jobLine(j))
		}
	}
	out["cron"] = mine
	return out
}

func jobLine(j cron.Job) string {
	when := j.Expr
	switch {
	case j.Every > 0:
		when = "every " + j.Every.String()
	case !j.At.IsZero():
		when = "at " + j.At.Format("2006-01-02 15:04")
	}
	return fmt.Sprintf("%s (%s): %s", j.ID, when, j.Name)
}

// SetMaxIterations changes agents.defaults.maxToolIterations in the config
// file; the workers' config watch reloads it.
func (s *Self) SetMaxIterations(_ context.Context, n int) (int, error) {
	cfg := currentConfig(s.config)
	if cfg.Path == "" || !cfg.Exists {
		return 0, errors.New("there is no config file to change")
	}
	old := cfg.TurnSettings().MaxIterations
	if err := config.SetFileValue(cfg.Path, []string{"agents", "defaults", "maxToolIterations"}, n); err != nil {
		return 0, err
	}
	return old, nil
}

// SetModelPreset switches the session's preset, as /model does.
func (s *Self) SetModelPreset(ctx context.Context, env tools.Env, name string) (string, int, error) {
	cfg := currentConfig(s.config)
	p, ok := providers.PresetFor(cfg, name)
	if !ok {
		names := append(providers.PresetNames(cfg), providers.DefaultPresetName)
		return "", 0, fmt.Errorf("unknown model preset %q. Available presets: %s", name, strings.Join(names, ", "))
	}
	err := s.store.Update(ctx, env.SessionKey, func(sess *session.Session) error {
		if name == providers.DefaultPresetName {
			delete(sess.Metadata, session.ModelPresetKey)
		} else {
			sess.Metadata[session.ModelPresetKey] = name
		}
		return nil
	})
	return p.Model, orDefault(p.ContextWindowTokens, cfg.TurnSettings().ContextWindowTokens), err
}

// SetScratch keeps a note in the session's metadata.
func (s *Self) SetScratch(ctx context.Context, env tools.Env, key string, value any) error {
	return s.store.Update(ctx, env.SessionKey, func(sess *session.Session) error {
		pad, _ := sess.Metadata[scratchpadKey].(map[string]any)
		pad = maps.Clone(pad)
		if pad == nil {
			pad = map[string]any{}
		}
		if _, ok := pad[key]; !ok && len(pad) >= tools.ScratchpadKeys {
			return tools.ErrScratchpadFull
		}
		pad[key] = value
		sess.Metadata[scratchpadKey] = pad
		return nil
	})
}
