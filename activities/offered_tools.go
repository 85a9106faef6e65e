package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// offeredToolsData is the turn data holding the tools the workspace host
// offers the turn: a model call on a host without the workspace (no MCP
// servers, no skills) reads them instead of its own registry.
const offeredToolsData = "tools"

// journalOffer keeps the registry's tools for this turn when its tools run
// on the workspace queue; BUILD runs on that host, so the list is the one
// the tool calls will find. Once per turn: a retry keeps the first list.
func (b *Toolbox) journalOffer(ctx context.Context, j journal, s protocol.Settings, key, turn string, kind protocol.TurnKind) error {
	if s.WorkspaceQueue == "" {
		return nil
	}
	raw, err := json.Marshal(b.refreshed(ctx, kind).Definitions())
	if err != nil {
		return fmt.Errorf("encode the offered tools: %w", err)
	}
	if err := j.store.AddTurnData(ctx, key, turn, offeredToolsData, raw); err != nil {
		return fmt.Errorf("save the offered tools: %w", err)
	}
	return nil
}

// offered are the tools a model call may offer before the policy filters
// them: the workspace host's list journaled at BUILD, or this process's.
func (b *Toolbox) offered(ctx context.Context, j journal, in protocol.LLMCallInput) ([]chat.ToolDefinition, error) {
	if in.Settings.WorkspaceQueue == "" {
		return b.refreshed(ctx, in.Profile.Kind).Definitions(), nil
	}
	return journaledTools(ctx, j, in.SessionKey, in.Turn)
}

// journaledTools are the tool definitions BUILD journaled for a turn on the workspace host.
func journaledTools(ctx context.Context, j journal, sessionKey, turn string) ([]chat.ToolDefinition, error) {
	raw, err := j.store.TurnData(ctx, sessionKey, turn, offeredToolsData)
	if err != nil {
		return nil, fmt.Errorf("turn %s has no tools from the workspace host (BUILD did not run?): %w", turn, err)
	}
	var defs []chat.ToolDefinition
	if err := json.Unmarshal(raw, &defs); err != nil {
		return nil, fmt.Errorf("turn %s: read the offered tools: %w", turn, err)
	}
	return defs, nil
}
