// Package activities holds every effect of a turn, one small struct per
// feature with the dependencies it uses: the turn's states, its commands,
// the model call, the tool call, delivery, memory, Dream, the heartbeat,
// cron and subagents. Each reads and writes the session journal so that a
// retry finds what an earlier attempt already did. workers/features.go
// registers them, feature by feature.
package activities

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
	"github.com/nanobot-durable/nanobot/usage"
)

// Model is a provider ready to call, with the model ID it expects.
type Model struct {
	Provider providers.Provider
	// ProviderName is the provider's registry name, for logs and summaries.
	ProviderName string
	// APIModel is the model ID sent on the wire (gateway prefixes stripped).
	APIModel    string
	Temperature *float64
}

// ModelSource builds model clients on the worker from its config, so API
// keys never enter workflow history.
type ModelSource interface {
	Model(name string) (Model, error)
}

// Deps are what a worker has; New hands each feature the part it uses.
type Deps struct {
	Store session.Store
	// Tools is the worker's tool registry; DreamTools Dream's own set.
	Tools      *tools.Registry
	DreamTools *tools.Registry
	// RefreshTools, when set, brings external tools (MCP) into Tools: it
	// connects lazily and must not fail the turn when a server is down.
	RefreshTools func(ctx context.Context)
	Models       ModelSource
	Prompt       prompt.Builder
	Streams      *channels.StreamHub
	Channels     *channels.Manager
	Workspace    string
	// RestrictToWorkspace confines tool paths to the workspace.
	RestrictToWorkspace bool
	// Private are the paths no tool may touch (tools.Env.Private): the config, its folder, nanobot's home.
	Private            []string
	MaxToolResultChars int
	// ExecSessions are the host's exec sessions, which /stop and /new end (nil: no exec).
	ExecSessions *tools.ExecSessions
	// Config is the worker's current config (it may be reloaded).
	Config func() *config.Config
	Log    *slog.Logger
	// Client talks to Temporal: /dream, running turns (idle compaction),
	// subagents, announcements and scheduled turns. Nil without one.
	Client client.Client
	// Usage records every model call's tokens (nil: not recorded).
	Usage usage.Store
	// Archive is the memory history and Dream's cursor (nil: the workspace's files).
	Archive memory.Archive
	// Pairing is the deployment's pairing store (nil: the config's home's file).
	Pairing *pairing.Store
	// Media makes a message's files readable on the host that reads them
	// (nil: the files, where every path is already local).
	Media media.Store
	// Owner is the instance's owner key: it opens messages' seals and proves approval answers.
	Owner owner.Key
	// ModelCallSlots caps the model calls this process runs at once, on either
	// queue they arrive on (NANOBOT_MAX_CONCURRENT_REQUESTS; 0: no cap, for tests of one call).
	ModelCallSlots int
}

// Set is every feature's activities, built from one Deps.
type Set struct {
	Turn      *Turn        // RESTORE, COMPACT, BUILD, SAVE and injections
	Commands  *Commands    // COMMAND: the slash commands
	Model     *ModelCall   // one model iteration
	Tools     *ToolCalls   // one tool call, or a result the workflow produced
	Approvals *Approvals   // a call that waits for a person: its request, its timeout
	Delivery  *Delivery    // replies to the chat's process
	Memory    *Memory      // consolidation, the next prompt's size, idle sessions
	Dream     *Dream       // Dream's runs
	Heartbeat *Heartbeat   // the heartbeat's tasks, decision and session
	Cron      *Cron        // a fired job's message, an "at" job's schedule
	Subagents *Subagents   // spawn, a subagent's start, its announcement
	Sessions  *SessionBook // a message between sessions that got no reply
	// Transcriber turns voice notes into text before BUILD.
	Transcriber *Transcriber
	Upkeep      *Upkeep // disk retention
}

// New builds every feature from the worker's dependencies.
func New(d Deps) *Set {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	j := journal{store: d.Store}
	if d.Media == nil {
		d.Media = media.Files{}
	}
	if d.Archive == nil {
		d.Archive = memory.Files{Workspace: d.Workspace}
	}
	if d.Prompt.Archive == nil {
		d.Prompt.Archive = d.Archive
	}
	box := &Toolbox{tools: d.Tools, dream: d.DreamTools, workspace: d.Workspace, restrict: d.RestrictToWorkspace,
		refresh: d.RefreshTools, config: d.Config}
	prompts := &Prompts{builder: d.Prompt, tools: box, journal: j}
	used := usageLog{store: d.Usage, log: d.Log}
	red := redactor{config: d.Config}
	dream := &Dream{journal: j, workspace: d.Workspace, archive: d.Archive, config: d.Config, log: d.Log}
	calls := &ToolCalls{journal: j, tools: box, streams: d.Streams, restrict: d.RestrictToWorkspace, private: d.Private,
		maxResultChars: d.MaxToolResultChars, exec: d.ExecSessions, redactor: red}
	return &Set{
		Turn: &Turn{journal: j, prompts: prompts, tools: box, dream: dream, streams: d.Streams, media: d.Media, config: d.Config, log: d.Log},
		Commands: &Commands{journal: j, workspace: d.Workspace, archive: d.Archive, pairing: d.Pairing, prompts: prompts,
			usage: d.Usage, config: d.Config, client: d.Client, owner: d.Owner, exec: d.ExecSessions, log: d.Log},
		Model: &ModelCall{journal: j, models: d.Models, tools: box, streams: d.Streams, usage: used, redactor: red,
			config: d.Config, maxResultChars: d.MaxToolResultChars, log: d.Log, slots: newModelSlots(d.ModelCallSlots)},
		Tools:     calls,
		Approvals: &Approvals{journal: j, owner: d.Owner, log: d.Log},
		Delivery:  &Delivery{journal: j, channels: d.Channels, media: d.Media},
		Memory: &Memory{journal: j, models: d.Models, prompts: prompts, workspace: d.Workspace, archive: d.Archive, usage: used,
			client: d.Client, config: d.Config, log: d.Log},
		Dream:     dream,
		Heartbeat: &Heartbeat{journal: j, models: d.Models, workspace: d.Workspace, config: d.Config, usage: used, log: d.Log},
		Cron:      &Cron{client: d.Client, config: d.Config},
		Subagents: &Subagents{journal: j, tools: box, client: d.Client, config: d.Config, workspace: d.Workspace, log: d.Log},
		Sessions:  NewSessionBook(d.Store, d.Client, d.Config),
		Transcriber: &Transcriber{journal: j, config: d.Config, http: &http.Client{Timeout: 90 * time.Second},
			media: d.Media, getenv: os.Getenv, log: d.Log},
		Upkeep: &Upkeep{journal: j, media: d.Media, config: d.Config, log: d.Log},
	}
}

// journal is the session store, as every feature reads it.
type journal struct{ store session.Store }

func (j journal) load(ctx context.Context, key string) (*session.Session, error) {
	sess, err := j.store.Load(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", key, err)
	}
	return sess, nil
}

// Toolbox is the worker's tools as a kind of turn sees them.
type Toolbox struct {
	tools, dream *tools.Registry
	workspace    string
	restrict     bool // tools.restrictToWorkspace
	refresh      func(ctx context.Context)
	config       func() *config.Config // tools.approval
}

// forKind is the tool set of a kind of turn: Dream's runs get their own.
func (b *Toolbox) forKind(kind protocol.TurnKind) *tools.Registry {
	if kind == protocol.DreamTurn && b.dream != nil {
		return b.dream
	}
	return b.tools
}

// policy is the rule on tools of a turn with this profile.
func (b *Toolbox) policy(p protocol.Profile) tools.Policy { return tools.NewPolicy(p, b.workspace) }

// ask is the policy's third verdict on a call: nil, or why a person must approve it first.
func (b *Toolbox) ask(ctx context.Context, p protocol.Profile, name, argsJSON string) *protocol.AskRef {
	cfg := currentConfig(b.config)
	if !cfg.Tools.Approval.Asks() {
		return nil
	}
	rules, err := tools.NewApproval(cfg.Tools.Approval)
	if err != nil {
		return &protocol.AskRef{Reason: "tools.approval is broken (" + err.Error() + "), so every call asks", Key: name}
	}
	policy := b.policy(p)
	env := tools.Env{Workspace: b.workspace, RestrictToWorkspace: b.restrict || policy.Confined(), Policy: policy}
	return b.forKind(p.Kind).Ask(ctx, rules, env, name, argsJSON)
}

// refreshed is forKind after the MCP servers were (re)connected.
func (b *Toolbox) refreshed(ctx context.Context, kind protocol.TurnKind) *tools.Registry {
	reg := b.forKind(kind)
	if reg == b.tools && b.refresh != nil {
		b.refresh(ctx)
	}
	return reg
}

// usageLog records model calls' tokens; a failure to record never fails the call.
type usageLog struct {
	store usage.Store
	log   *slog.Logger
}

func (u usageLog) add(rec usage.Record) {
	if u.store == nil {
		return
	}
	if err := u.store.Add(rec); err != nil {
		u.log.Error("recording token usage failed", "session", rec.Session, "call", rec.Call, "error", err)
	}
}

// currentConfig is the worker's config now; outside a worker (a test, a
// benchmark), nanobot's defaults.
// instanceOf is the nanobot instance of the run an activity serves, read
// from the activity's task queue as the workflows read theirs.
func instanceOf(ctx context.Context) protocol.Instance {
	if !activity.IsActivity(ctx) {
		return protocol.DefaultInstance
	}
	return protocol.InstanceOfQueue(activity.GetInfo(ctx).TaskQueue)
}

func currentConfig(cfg func() *config.Config) *config.Config {
	if cfg != nil {
		if c := cfg(); c != nil {
			return c
		}
	}
	return config.Default()
}
