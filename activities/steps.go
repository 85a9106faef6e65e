package activities

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// Texts written into the journal when a turn was cut short (nanobot's words).
const (
	InterruptedReply      = "Error: Task interrupted before a response was generated."
	InterruptedTool       = "Error: Task interrupted before this tool finished."
	ModelErrorPlaceholder = "[Assistant reply unavailable due to model error.]"
)

// Restore loads the session and closes an earlier turn that ended without
// a reply (terminated, timed out), before this turn's message is added.
func (a *Activities) Restore(ctx context.Context, in protocol.StepInput) (protocol.RestoreResult, error) {
	var res protocol.RestoreResult
	err := a.Store.Update(ctx, in.SessionKey, func(s *session.Session) error {
		res.SkippedLines = len(s.Problems)
		res.ClosedPending = closeInterrupted(s, in.Turn)
		res.Messages = len(s.Messages)
		for _, m := range s.History(0) {
			res.EstimatedTokens += session.EstimateTokens(m)
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("restore session %s: %w", in.SessionKey, err)
	}
	return res, nil
}

// closeInterrupted backfills results of tool calls that never finished and
// the reply of a user message that never got one. It reports whether it did.
func closeInterrupted(s *session.Session, currentTurn string) bool {
	last := -1
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if !s.Messages[i].Command {
			last = i
			break
		}
	}
	if last < 0 || s.Messages[last].Turn == currentTurn {
		return false
	}
	m := s.Messages[last]
	if m.Role == chat.RoleAssistant && len(m.ToolCalls) == 0 {
		return false // the earlier turn ended with a reply
	}
	now := time.Now().Format(session.TimeLayout)
	// Find the last assistant message with tool calls and backfill what is missing.
	for i := last; i >= 0; i-- {
		am := s.Messages[i]
		if am.Role == chat.RoleUser {
			break
		}
		if am.Role != chat.RoleAssistant || len(am.ToolCalls) == 0 {
			continue
		}
		have := map[string]bool{}
		for _, r := range s.Messages[i+1:] {
			if r.Role == chat.RoleTool {
				have[r.ToolCallID] = true
			}
		}
		for _, tc := range am.ToolCalls {
			if !have[tc.ID] {
				s.Messages = append(s.Messages, chat.Message{
					Role: chat.RoleTool, ToolCallID: tc.ID, Name: tc.Function.Name, Content: InterruptedTool,
					Timestamp: now, Turn: am.Turn, EntryID: "tool-" + tc.ID,
				})
			}
		}
		break
	}
	s.Messages = append(s.Messages, chat.Message{
		Role: chat.RoleAssistant, Content: InterruptedReply, Timestamp: now, Turn: m.Turn, EntryID: "interrupted",
	})
	return true
}

// Compact checks the session against the context budget. Consolidation
// into memory arrives with the memory work; until then it only measures.
func (a *Activities) Compact(ctx context.Context, in protocol.StepInput) (protocol.CompactResult, error) {
	sess, err := a.load(ctx, in.SessionKey)
	if err != nil {
		return protocol.CompactResult{}, err
	}
	tokens := 0
	for _, m := range sess.History(0) {
		tokens += session.EstimateTokens(m)
	}
	budget := inputBudget(in.Settings)
	return protocol.CompactResult{Note: fmt.Sprintf("%d of %d tokens", tokens, budget)}, nil
}

// inputBudget is nanobot's: context window − max tokens − 1024.
func inputBudget(s protocol.Settings) int {
	b := s.ContextWindowTokens - s.MaxTokens - 1024
	if b < 1024 {
		b = 1024
	}
	return b
}

// Build journals the user's message and fixes the turn's system prompt, so
// every model call of the turn (and every retry) reads the same bytes.
func (a *Activities) Build(ctx context.Context, in protocol.StepInput) (protocol.BuildResult, error) {
	system, err := a.Prompt.SystemPrompt(in.Message.Channel)
	if err != nil {
		return protocol.BuildResult{}, fmt.Errorf("build system prompt: %w", err)
	}
	if _, err := a.Store.TurnData(ctx, in.SessionKey, in.Turn, "system"); err != nil {
		if err := a.Store.PutTurnData(ctx, in.SessionKey, in.Turn, "system", []byte(system)); err != nil {
			return protocol.BuildResult{}, fmt.Errorf("save system prompt: %w", err)
		}
	}
	user := chat.Message{Role: chat.RoleUser, Content: in.Message.Content, Turn: in.Turn, EntryID: "user"}
	if _, err := a.Store.Append(ctx, in.SessionKey, user); err != nil {
		return protocol.BuildResult{}, fmt.Errorf("journal user message: %w", err)
	}
	sess, err := a.load(ctx, in.SessionKey)
	if err != nil {
		return protocol.BuildResult{}, err
	}
	return protocol.BuildResult{SystemPromptChars: len(system), HistoryMessages: len(sess.History(inputBudget(in.Settings)))}, nil
}

// Save closes the turn in the journal: the reply that was not journaled by
// the model call (errors get a placeholder) and the turn's latency.
func (a *Activities) Save(ctx context.Context, in protocol.SaveInput) error {
	return a.Store.Update(ctx, in.SessionKey, func(s *session.Session) error {
		if in.FinalEntry == "" && s.Find(in.Turn, "final") < 0 {
			text := in.Reply
			if in.StopReason == protocol.StopError {
				text = ModelErrorPlaceholder
			}
			s.Messages = append(s.Messages, chat.Message{
				Role: chat.RoleAssistant, Content: text, Turn: in.Turn, EntryID: "final",
				Timestamp: time.Now().Format(session.TimeLayout),
			})
		}
		orderToolResults(s, in.Turn)
		entry := in.FinalEntry
		if entry == "" {
			entry = "final"
		}
		if i := s.Find(in.Turn, entry); i >= 0 {
			s.Messages[i].LatencyMS = in.LatencyMS
		}
		return nil
	})
}

// orderToolResults puts each batch's tool results in the order of the
// calls (parallel calls journal in completion order), as nanobot saves them.
func orderToolResults(s *session.Session, turn string) {
	for i := 0; i < len(s.Messages); i++ {
		am := s.Messages[i]
		if am.Turn != turn || am.Role != chat.RoleAssistant || len(am.ToolCalls) == 0 {
			continue
		}
		end := i + 1
		for end < len(s.Messages) && s.Messages[end].Role == chat.RoleTool {
			end++
		}
		rank := map[string]int{}
		for k, tc := range am.ToolCalls {
			rank[tc.ID] = k
		}
		results := s.Messages[i+1 : end]
		sort.SliceStable(results, func(a, b int) bool { return rank[results[a].ToolCallID] < rank[results[b].ToolCallID] })
		i = end - 1
	}
}
