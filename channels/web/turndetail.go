package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/inspect"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/tools"
)

// maxCallText bounds a tool call's arguments and result on a card.
const maxCallText = 4000

// runIDs are Temporal run IDs (UUIDs); nothing else is asked for.
var runIDs = regexp.MustCompile(`^[0-9A-Fa-f-]{8,64}$`)

// exitCode is the trailer the exec tool writes when a command fails.
var exitCode = regexp.MustCompile(`(?m)^Exit code: (\d+)`)

// journalCall is a tool call as the journal keeps it, whole (the history has previews).
type journalCall struct {
	Name   string `json:"name"`
	Args   string `json:"args"`
	Result string `json:"result"`
	// ExitCode is an exec call's exit status (nil: not a command, or no result yet).
	ExitCode *int `json:"exit_code,omitempty"`
	// Diff is an edit_file or write_file call as a unified diff (fileEditDiff).
	Diff string `json:"diff,omitempty"`
	// Subagent is the ID of the subagent a spawn call started (GET /api/subagent tells how it is doing).
	Subagent string `json:"subagent,omitempty"`
}

// turnDetails is what a turn did: its states, model and tool calls from
// Temporal's history, each tool call's arguments and result from the journal.
type turnDetails struct {
	Turn    *inspect.Turn          `json:"turn,omitempty"`
	Calls   map[string]journalCall `json:"calls"`
	Inspect string                 `json:"inspect,omitempty"`
	// Unavailable says why Temporal's side is missing (the journal's is still shown).
	Unavailable string `json:"unavailable,omitempty"`
}

// showTurn answers /api/turn?session=…&turn=<run ID> (or chat=… for a web chat).
func (c *Channel) showTurn(w http.ResponseWriter, r *http.Request) {
	key, ok := sessionParam(w, r)
	if !ok {
		return
	}
	run := r.URL.Query().Get("turn")
	if !runIDs.MatchString(run) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("turn %q: want the run ID of a turn", run))
		return
	}
	calls, err := c.journalCalls(r.Context(), key, run)
	if err != nil {
		c.log.Error("reading a turn's tool calls failed", "session", key, "turn", run, "error", err)
		writeError(w, http.StatusInternalServerError, "could not read the turn's tool calls: "+err.Error())
		return
	}
	out := turnDetails{Calls: calls}
	if base := c.inspectBase(key); base != "" {
		out.Inspect = base + run + "/history"
	}
	c.mu.Lock()
	h, _ := c.turns.(TurnHistories)
	c.mu.Unlock()
	switch {
	case h == nil:
		out.Unavailable = "this gateway does not reach Temporal"
	default:
		t, err := h.Details(r.Context(), key, run)
		if errors.Is(err, inspect.ErrNoTurn) {
			out.Unavailable = "Temporal no longer keeps this turn's history (retention)"
		} else if err != nil {
			c.log.Warn("reading a turn's history failed", "session", key, "turn", run, "error", err)
			out.Unavailable = "could not read the turn's history: " + err.Error()
		}
		out.Turn = t
	}
	writeJSON(w, http.StatusOK, out)
}

// journalCalls are the tool calls the turn journaled, by call ID, with their results.
func (c *Channel) journalCalls(ctx context.Context, key, run string) (map[string]journalCall, error) {
	s, err := c.store.Load(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	out := map[string]journalCall{}
	for _, m := range s.Messages {
		if m.Turn != run {
			continue
		}
		switch m.Role {
		case chat.RoleAssistant:
			for _, tc := range m.ToolCalls {
				jc := journalCall{Name: tc.Function.Name, Args: chat.Cut(tc.Function.Arguments, maxCallText),
					Diff: chat.Cut(fileEditDiff(tc.Function.Name, tc.Function.Arguments), maxCallText)}
				if jc.Name == (tools.SpawnTool{}).Name() {
					jc.Subagent = protocol.SubagentID(run, tc.ID)
				}
				out[tc.ID] = jc
			}
		case chat.RoleTool:
			jc := out[m.ToolCallID]
			jc.Result = chat.Cut(m.Content, maxCallText)
			if jc.Name == "exec" {
				code := 0
				if sub := exitCode.FindAllStringSubmatch(m.Content, -1); len(sub) > 0 {
					code, _ = strconv.Atoi(sub[len(sub)-1][1])
				}
				jc.ExitCode = &code
			}
			out[m.ToolCallID] = jc
		}
	}
	return out, nil
}
