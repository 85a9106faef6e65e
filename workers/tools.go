package workers

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/cliapps"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/secrets"
	"github.com/nanobot-durable/nanobot/tools"
)

// execSessions are the host's exec sessions: their supervisors' folders are
// in the state dir beside the config (hidden from the sandbox), nil without exec.
func execSessions(cfg *config.Config) *tools.ExecSessions {
	if !cfg.Tools.Exec.Enable {
		return nil
	}
	root := filepath.Join(config.ConfigDir(cfg.Path), "exec-sessions")
	return tools.NewExecSessions(root, time.Duration(cfg.Tools.Exec.SessionIdleMinutes)*time.Minute)
}

// builtinOptions maps config.json's tools block onto the built-in tools;
// exec runs in sb unless tools.exec.sandbox is "none" ("bwrap": or not at all).
func builtinOptions(t config.Tools, sb *tools.Sandbox, keys *secrets.Set) tools.BuiltinOptions {
	exec := tools.DefaultExecOptions()
	exec.Timeout = time.Duration(t.Exec.Timeout) * time.Second
	exec.DenyPatterns, exec.AllowPatterns = t.Exec.DenyPatterns, t.Exec.AllowPatterns
	exec.PathPrepend, exec.PathAppend = t.Exec.PathPrepend, t.Exec.PathAppend
	exec.AllowedEnvKeys, exec.Secrets = t.Exec.AllowedEnvKeys, keys
	if t.Exec.SandboxMode() != config.SandboxNone {
		exec.Sandbox, exec.SandboxRequired = sb, t.Exec.SandboxMode() == config.SandboxBwrap
	}
	return tools.BuiltinOptions{
		DisableFiles:  !t.File.Enable,
		ExecEnabled:   t.Exec.Enable,
		Exec:          exec,
		WebEnabled:    t.Web.Enable,
		SSRFWhitelist: t.SSRFWhitelist,
		Web: tools.WebOptions{
			UserAgent: t.Web.UserAgent, Proxy: t.Web.Proxy,
			SearchProvider: t.Web.Search.Provider, SearchAPIKey: t.Web.Search.APIKey, SearchBaseURL: t.Web.Search.BaseURL,
			SearchMaxResults: t.Web.Search.MaxResults, SearchTimeout: time.Duration(t.Web.Search.Timeout) * time.Second,
			UseJinaReader: t.Web.Fetch.UseJinaReader,
		},
	}
}

// newRegistry builds the tool registry of a worker from its config; the
// message tool comes with a sender.
func newRegistry(cfg *config.Config, sb *tools.Sandbox, sessions *tools.ExecSessions, sender tools.MessageSender, goals tools.GoalStore, jobs tools.CronJobs, book tools.SessionBook, self *activities.Self) (*tools.Registry, error) {
	reg := tools.NewRegistry()
	opts := builtinOptions(cfg.Tools, sb, secrets.FromEnv(cfg))
	opts.Exec.Sessions = sessions
	opts.MessageSender = sender
	opts.Spawn = sender != nil // subagents need Temporal, as messages do
	opts.Goals = goals
	opts.Cron, opts.CronTimezone = jobs, cfg.Agents.Defaults.Timezone
	opts.Sessions = book
	opts.ImageGen = imageGenOptions(cfg)
	if c := cfg.Tools.CLIApps; c.Enable {
		opts.CLIApps = cliapps.ForConfig(cfg)
		opts.CLIAppsRunTimeout = time.Duration(c.RunTimeout) * time.Second
	}
	if self != nil && cfg.Tools.My.Enable {
		opts.Self, opts.MyAllowSet = self, cfg.Tools.My.AllowSet
		self.Tools = reg.Names
	}
	if err := tools.RegisterBuiltins(reg, opts); err != nil {
		return nil, fmt.Errorf("config %s: tools: %w", cfg.Path, err)
	}
	return reg, nil
}

// imageGenOptions maps tools.imageGeneration and its provider's block; nil when off.
func imageGenOptions(cfg *config.Config) *tools.ImageGenOptions {
	ig := cfg.Tools.ImageGeneration
	if !ig.Enabled {
		return nil
	}
	p := cfg.Providers[ig.Provider]
	return &tools.ImageGenOptions{
		Provider: ig.Provider, Model: ig.Model,
		DefaultAspectRatio: ig.DefaultAspectRatio, DefaultImageSize: ig.DefaultImageSize,
		MaxImagesPerTurn: ig.MaxImagesPerTurn, SaveDir: ig.SaveDir,
		APIKey: p.APIKey, APIBase: p.APIBase, ExtraHeaders: p.ExtraHeaders, ExtraBody: p.ExtraBody,
	}
}

// ImageGenerationWarning says when generate_image is on with a provider
// this build cannot call, "" otherwise.
func ImageGenerationWarning(cfg *config.Config) string {
	ig := cfg.Tools.ImageGeneration
	if !ig.Enabled {
		return ""
	}
	if err := tools.ImageProviderSupported(ig.Provider); err != nil {
		return "tools.imageGeneration.provider: " + err.Error()
	}
	return ""
}

// WebSearchWarning says when web_search will not use the provider the
// config names (a missing credential, a provider this build lacks), "" when
// it will or web tools are off.
func WebSearchWarning(cfg *config.Config) string {
	w := cfg.Tools.Web
	if !w.Enable {
		return ""
	}
	return tools.ChooseSearch(w.Search.Provider, w.Search.APIKey, w.Search.BaseURL, nil).Warning
}
