package tools

import (
	"time"

	"github.com/nanobot-durable/nanobot/cliapps"
)

// BuiltinOptions carry the config values the built-in tools need; the
// caller maps config.Tools onto them so this package stays config-free.
type BuiltinOptions struct {
	// DisableFiles leaves out the file tools (tools.file.enable = false):
	// read_file, write_file, edit_file, list_dir, apply_patch, grep, find_files.
	DisableFiles bool

	// ExecEnabled registers exec (tools.exec.enable) with Exec.
	ExecEnabled bool
	Exec        ExecOptions

	// WebEnabled registers web_fetch and web_search (tools.web.enable) with Web.
	WebEnabled bool
	Web        WebOptions

	// SSRFWhitelist are CIDRs reachable despite the SSRF guard (tools.ssrfWhitelist);
	// used by web_fetch and exec's internal-URL check unless Web.SSRF / Exec.URLGuard are set.
	SSRFWhitelist []string
	// Resolver overrides DNS for the SSRF guard (tests); nil = system resolver.
	Resolver Resolver

	// MessageSender, when set, registers the message tool.
	MessageSender MessageSender
	// Spawn registers the spawn tool (the turn workflow runs its calls).
	Spawn bool
	// Goals, when set, registers create_goal and update_goal.
	Goals GoalStore
	// Sessions, when set, registers list_sessions, read_session,
	// search_sessions and send_session_message.
	Sessions SessionBook
	// Self, when set, registers my (tools.my.enable); MyAllowSet lets it set.
	Self       Self
	MyAllowSet bool
	// Cron, when set, registers the cron tool; CronTimezone is its default zone.
	Cron         CronJobs
	CronTimezone string
	// ImageGen, when set, registers generate_image (tools.imageGeneration.enabled);
	// it sends its images through MessageSender.
	ImageGen *ImageGenOptions
	// CLIApps, when set, registers run_cli_app (tools.cliApps.enable); it
	// runs apps with Exec's sandbox and environment, CLIAppsRunTimeout by default.
	CLIApps           *cliapps.Manager
	CLIAppsRunTimeout time.Duration
}

// RegisterBuiltins registers the built-in tools the options enable. It
// fails on configuration errors (bad CIDRs or regexes), registering nothing.
func RegisterBuiltins(r *Registry, opts BuiltinOptions) error {
	guard, err := NewSSRFGuard(opts.SSRFWhitelist, opts.Resolver)
	if err != nil {
		return err
	}
	var tools []Tool
	if !opts.DisableFiles {
		tools = append(tools, readFile{}, writeFile{}, editFile{}, listDir{}, applyPatch{}, grepTool{}, findFiles{})
	}
	if opts.ExecEnabled {
		eo := opts.Exec
		if eo.URLGuard == nil {
			eo.URLGuard = guard
		}
		ex, err := NewExec(eo)
		if err != nil {
			return err
		}
		tools = append(tools, ex)
		if eo.Sessions != nil {
			tools = append(tools, NewWriteStdin(eo.Sessions, ex), NewListExecSessions(eo.Sessions))
		}
	}
	if opts.WebEnabled {
		if _, err := ParseWebProxy(opts.Web.Proxy); err != nil {
			return err
		}
		wo := opts.Web
		if wo.SSRF == nil {
			wo.SSRF = guard
		}
		if wo.Lookups == nil {
			wo.Lookups = NewLookupGuard()
		}
		tools = append(tools, NewWebFetch(wo), NewWebSearch(wo))
	}
	if opts.MessageSender != nil {
		tools = append(tools, NewMessageTool(opts.MessageSender))
	}
	if opts.Spawn {
		tools = append(tools, SpawnTool{})
	}
	if opts.Goals != nil {
		tools = append(tools, CreateGoalTool{opts.Goals}, UpdateGoalTool{opts.Goals})
	}
	if opts.Cron != nil {
		tools = append(tools, NewCronTool(opts.Cron, opts.CronTimezone))
	}
	if opts.Self != nil {
		tools = append(tools, NewMyTool(opts.Self, opts.MyAllowSet))
	}
	if opts.ImageGen != nil {
		ig := *opts.ImageGen
		if ig.Downloads == nil {
			ig.Downloads = guard.HTTPClient(120*time.Second, 5, nil)
		}
		tools = append(tools, NewGenerateImage(ig, opts.MessageSender))
	}
	if opts.CLIApps != nil {
		tools = append(tools, NewRunCLIApp(opts.CLIApps, opts.Exec, opts.CLIAppsRunTimeout))
	}
	if opts.Sessions != nil {
		tools = append(tools, NewListSessions(opts.Sessions), NewReadSession(opts.Sessions),
			NewSearchSessions(opts.Sessions), NewSendSessionMessage(opts.Sessions))
	}
	for i, t := range tools {
		if err := r.add(t, builtinSchema(t)); err != nil {
			for _, done := range tools[:i] {
				r.Unregister(done.Name())
			}
			return err
		}
	}
	return nil
}
