// Package activities holds every effect of a turn: the state activities
// (local, on files), the model call, the tool calls and delivery. Each reads
// and writes the session journal so that a retry finds what an earlier
// attempt already did.
package activities

import (
	"context"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
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

// Activities carries the worker's dependencies.
type Activities struct {
	Store     session.Store
	Tools     *tools.Registry
	Models    ModelSource
	Prompt    prompt.Builder
	Streams   *channels.StreamHub
	Channels  *channels.Manager
	Workspace string
	// RestrictToWorkspace confines tool paths to the workspace.
	RestrictToWorkspace bool
	MaxToolResultChars  int
	// Config is the worker's current config (it may be reloaded).
	Config func() *config.Config
	// RefreshTools, when set, brings external tools (MCP) into Tools: it
	// connects lazily and must not fail the turn when a server is down.
	RefreshTools func(ctx context.Context)
	Log          *slog.Logger
	// DreamTools is Dream's confined tool set, used by dream:* sessions.
	DreamTools *tools.Registry
	// Client talks to Temporal: Dream for /dream, running turns (idle
	// compaction), subagents and their announcements. Nil without one.
	Client client.Client
	// Usage records every model call's tokens (nil: not recorded).
	Usage *usage.Store
	// Settings are the knobs of a turn a schedule starts (from the current config).
	Settings func() protocol.Settings
}

// toolsFor is the tool set of a kind of turn: Dream's runs get their own.
func (a *Activities) toolsFor(kind protocol.TurnKind) *tools.Registry {
	if kind == protocol.DreamTurn && a.DreamTools != nil {
		return a.DreamTools
	}
	return a.Tools
}

// policy is the rule on tools of a turn with this profile.
func (a *Activities) policy(p protocol.Profile) tools.Policy { return tools.NewPolicy(p, a.Workspace) }

// offered are the definitions a turn with this profile shows the model;
// MCP servers are (re)connected first.
func (a *Activities) offered(ctx context.Context, p protocol.Profile, goalActive bool) []chat.ToolDefinition {
	reg := a.toolsFor(p.Kind)
	if reg == a.Tools {
		a.refreshTools(ctx)
	}
	return a.policy(p).WithActiveGoal(goalActive).Offer(reg.Definitions())
}

func (a *Activities) refreshTools(ctx context.Context) {
	if a.RefreshTools != nil {
		a.RefreshTools(ctx)
	}
}

func (a *Activities) log() *slog.Logger {
	if a.Log == nil {
		return slog.Default()
	}
	return a.Log
}

func (a *Activities) load(ctx context.Context, key string) (*session.Session, error) {
	sess, err := a.Store.Load(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", key, err)
	}
	return sess, nil
}
