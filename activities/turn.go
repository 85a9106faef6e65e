package activities

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/governance"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tokens"
)

// keptTurnData is how many turns' system prompts a session keeps on disk.
const keptTurnData = 20

// Texts written into the journal when a turn was cut short (nanobot's words).
const (
	InterruptedReply = "Error: Task interrupted before a response was generated."
	InterruptedTool  = "Error: Task interrupted before this tool finished."
	// ModelErrorPlaceholder stands in history for a reply the model never gave.
	ModelErrorPlaceholder = governance.ModelErrorPlaceholder
)

// Turn is the turn's own states: RESTORE, COMPACT, BUILD, SAVE, and the
// injections of messages that arrive while it runs.
type Turn struct {
	journal
	prompts *Prompts
	tools   *Toolbox // the tools offered, journaled when they run on the workspace host
	dream   *Dream   // a Dream run's turn message
	streams *channels.StreamHub
	media   media.Store           // the message's files, fetched to this host
	config  func() *config.Config // /model presets
	log     *slog.Logger
}

// Restore loads the session and closes an earlier turn that ended without
// a reply (terminated, timed out), before this turn's message is added.
func (a *Turn) Restore(ctx context.Context, in protocol.StepInput) (protocol.RestoreResult, error) {
	var res protocol.RestoreResult
	restore := func(s *session.Session) error {
		res.SkippedLines = len(s.Problems)
		if name := s.ModelPreset(); name != "" && a.config != nil {
			if p, ok := providers.PresetFor(a.config(), name); ok {
				res.Model, res.MaxTokens, res.ContextWindowTokens = name, p.MaxTokens, p.ContextWindowTokens
			}
		}
		res.ClosedPending = closeInterrupted(s, in.Turn)
		res.Messages = len(s.Messages)
		return nil
	}
	// The common turn changes nothing here: the file is rewritten (and
	// synced) only to close an interrupted turn or drop unreadable lines.
	sess, err := a.load(ctx, in.SessionKey)
	if err == nil {
		err = restore(sess)
	}
	if err == nil && (res.ClosedPending || res.SkippedLines > 0) {
		if err = a.store.Update(ctx, in.SessionKey, restore); err == nil {
			sess, err = a.load(ctx, in.SessionKey)
		}
	}
	if err != nil {
		return res, fmt.Errorf("restore session %s: %w", in.SessionKey, err)
	}
	// The prompt this turn would send, for the workflow's consolidation decision.
	s := in.Settings
	if res.Model != "" {
		s.Model = res.Model
		s.MaxTokens = cmp.Or(res.MaxTokens, s.MaxTokens)
		s.ContextWindowTokens = cmp.Or(res.ContextWindowTokens, s.ContextWindowTokens)
	}
	step := in
	step.Settings = s
	if res.EstimatedTokens, err = a.prompts.tokens(ctx, step, sess, in.Message.Content); err != nil {
		return res, fmt.Errorf("measure the prompt of session %s: %w", in.SessionKey, err)
	}
	res.Budget = inputBudget(s)
	return res, nil
}

// closeInterrupted closes the turn of the session's last message when it
// is not the current one and ended without a reply. It reports whether it did.
func closeInterrupted(s *session.Session, currentTurn string) bool {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if m := s.Messages[i]; !m.Command {
			return m.Turn != currentTurn && closeTurn(s, m.Turn)
		}
	}
	return false
}

// closeTurn backfills the results of the turn's tool calls that never
// finished and, when the turn has no reply, the interruption note.
func closeTurn(s *session.Session, turn string) bool {
	last := -1
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if m := s.Messages[i]; !m.Command && m.Turn == turn {
			last = i
			break
		}
	}
	if last < 0 {
		return false
	}
	if m := s.Messages[last]; m.Role == chat.RoleAssistant && len(m.ToolCalls) == 0 && strings.TrimSpace(m.Content) != "" {
		return false // the turn ended with a reply
	}
	now := time.Now().Format(session.TimeLayout)
	backfillToolResults(s, turn, now)
	s.Messages = append(s.Messages, chat.Message{
		Role: chat.RoleAssistant, Content: InterruptedReply, Timestamp: now, Turn: turn, EntryID: "interrupted",
	})
	return true
}

// backfillToolResults gives each of the turn's tool calls that never
// finished the interruption note, so the history replays.
func backfillToolResults(s *session.Session, turn, now string) {
	have := map[string]bool{}
	for _, m := range s.Messages {
		if m.Turn == turn && m.Role == chat.RoleTool {
			have[m.ToolCallID] = true
		}
	}
	for _, am := range s.Messages {
		if am.Turn != turn || am.Role != chat.RoleAssistant {
			continue
		}
		for _, tc := range am.ToolCalls {
			if !have[tc.ID] {
				have[tc.ID] = true
				s.Messages = append(s.Messages, chat.Message{
					Role: chat.RoleTool, ToolCallID: tc.ID, Name: tc.Function.Name, Content: InterruptedTool,
					Timestamp: now, Turn: turn, EntryID: "tool-" + tc.ID,
				})
			}
		}
	}
}

// Compact checks the session against the context budget. Consolidation
// into memory arrives with the memory work; until then it only measures.
func (a *Turn) Compact(ctx context.Context, in protocol.StepInput) (protocol.CompactResult, error) {
	sess, err := a.load(ctx, in.SessionKey)
	if err != nil {
		return protocol.CompactResult{}, err
	}
	n := governance.HistoryTokens(sess, tokens.For(in.Settings.Model).Message)
	return protocol.CompactResult{Note: fmt.Sprintf("%d of %d tokens", n, inputBudget(in.Settings))}, nil
}

// inputBudget is nanobot's (context window − max tokens − 1024), with a floor
// so a misconfigured window still leaves room for the current message.
func inputBudget(s protocol.Settings) int {
	return governance.InputBudget(s.ContextWindowTokens, s.MaxTokens)
}

// Build journals the user's message and fixes the turn's system prompt, so
// every model call of the turn (and every retry) reads the same bytes.
func (a *Turn) Build(ctx context.Context, in protocol.StepInput) (protocol.BuildResult, error) {
	before, err := a.load(ctx, in.SessionKey)
	if err != nil {
		return protocol.BuildResult{}, err
	}
	content := in.Message.Content
	system, err := a.prompts.system(in, before)
	if in.Message.Kind == protocol.DreamTurn {
		system, _ = prompt.WorkspacePrompt(prompt.WorkspacePromptFile(a.dream.workspace, "dream"), DreamSystemPrompt)
		content, err = a.dream.prompt(ctx, in.Message)
	}
	if err != nil {
		return protocol.BuildResult{}, fmt.Errorf("build system prompt: %w", err)
	}
	if err := a.markSessionKind(ctx, before, in.Message.Kind.SessionKind()); err != nil {
		return protocol.BuildResult{}, err
	}
	if err := a.store.AddTurnData(ctx, in.SessionKey, in.Turn, "system", []byte(system)); err != nil {
		return protocol.BuildResult{}, fmt.Errorf("save system prompt: %w", err)
	}
	if err := a.tools.journalOffer(ctx, a.journal, in.Settings, in.SessionKey, in.Turn, in.Message.Kind); err != nil {
		return protocol.BuildResult{}, err
	}
	user := chat.Message{Role: chat.RoleUser, Turn: in.Turn, EntryID: "user"}
	files, err := media.LocalAll(ctx, a.media, in.Message.Media)
	if err != nil {
		return protocol.BuildResult{}, fmt.Errorf("fetch the message's files: %w", err)
	}
	user.Content, user.ContentParts = userContent(goalTurnContent(content), files, heardAt(a.transcripts(ctx, in.SessionKey, in.Turn, in.Message.Media), in.Message.Media, files))
	added, err := a.store.Append(ctx, in.SessionKey, user)
	if err != nil {
		return protocol.BuildResult{}, fmt.Errorf("journal user message: %w", err)
	}
	// The session as journaled now, without reading it again: before and the message just added.
	sess := before
	if added > 0 {
		sess.Messages = append(sess.Messages, user)
	} else if before.Find(in.Turn, "user") < 0 { // another writer added it since: read what it wrote
		if sess, err = a.load(ctx, in.SessionKey); err != nil {
			return protocol.BuildResult{}, err
		}
	}
	return protocol.BuildResult{SystemPromptChars: len(system), HistoryMessages: len(sess.History(inputBudget(in.Settings), tokens.For(in.Settings.Model).Message))}, nil
}

// BuildHere is Build tried in place on the workspace host's turn worker. A method of its own: the
// SDK maps a registered function's short name to its activity name, so registering Build itself
// under this name would send every ExecuteActivity("Build") of that worker here.
func (a *Turn) BuildHere(ctx context.Context, in protocol.StepInput) (protocol.BuildResult, error) {
	return a.Build(ctx, in)
}

// BuildElsewhere is BuildHere on a worker without the workspace: the workflow sends BUILD to the
// workspace host's queue instead.
func (a *Turn) BuildElsewhere(context.Context, protocol.StepInput) (protocol.BuildResult, error) {
	return protocol.BuildResult{}, temporal.NewNonRetryableApplicationError("the workspace is on another host", protocol.ErrNotHere, nil)
}

// Save closes the turn in the journal with nanobot's _save_turn rules:
// the reply that no model message holds (errors get a placeholder), a
// continued reply joined into one message, tool results in call order
// without undeclared or duplicate ones, inline images replaced, the
// turn's latency, and the session's token totals.
func (a *Turn) Save(ctx context.Context, in protocol.SaveInput) error {
	if err := a.store.PruneTurnData(ctx, in.SessionKey, keptTurnData); err != nil {
		a.log.Warn("pruning old turn data failed", "session", in.SessionKey, "error", err)
	}
	return a.store.Update(ctx, in.SessionKey, func(s *session.Session) error { return saveTurn(s, in) })
}

func saveTurn(s *session.Session, in protocol.SaveInput) error {
	now := time.Now().Format(session.TimeLayout)
	switch in.StopReason {
	case protocol.StopCancelled:
		closeTurn(s, in.Turn)
	case protocol.StopFailed: // the message, what finished, and the failure: nothing is lost
		if s.Find(in.Turn, "user") < 0 && in.Message.Content != "" {
			s.Messages = append(s.Messages, chat.Message{Role: chat.RoleUser, Content: in.Message.Content, Turn: in.Turn, EntryID: "user", Timestamp: now})
		}
		backfillToolResults(s, in.Turn, now)
	}
	if len(in.Segments) > 1 && s.Find(in.Turn, "final") < 0 {
		joinSegments(s, in.Turn, in.Segments)
		in.FinalEntry = "final"
	}
	if in.FinalEntry == "" && in.StopReason != protocol.StopCancelled && s.Find(in.Turn, "final") < 0 {
		text := in.Reply
		if in.StopReason == protocol.StopError {
			text = ModelErrorPlaceholder
		}
		s.Messages = append(s.Messages, chat.Message{
			Role: chat.RoleAssistant, Content: text, Turn: in.Turn, EntryID: "final", Timestamp: now,
		})
	}
	cleanToolResults(s, in.Turn)
	orderToolResults(s, in.Turn)
	replaceInlineImages(s, in.Turn)
	entry := in.FinalEntry
	if entry == "" {
		entry = "final"
	}
	if i := s.Find(in.Turn, entry); i >= 0 && in.LatencyMS > 0 {
		s.Messages[i].LatencyMS = in.LatencyMS
	}
	addUsage(s, in.Turn, in.PromptTokens, in.CompletionTokens)
	return nil
}

// joinSegments replaces the pieces of a continued reply by one message.
func joinSegments(s *session.Session, turn string, segments []string) {
	var text strings.Builder
	keep := s.Messages[:0]
	first := -1
	want := map[string]bool{}
	for _, id := range segments {
		want[id] = true
	}
	for _, m := range s.Messages {
		if m.Turn == turn && want[m.EntryID] {
			text.WriteString(m.Content)
			if first < 0 {
				first = len(keep)
				m.EntryID, m.FinishReason = "final", "stop"
				keep = append(keep, m)
			}
			continue
		}
		keep = append(keep, m)
	}
	s.Messages = keep
	if first >= 0 {
		s.Messages[first].Content = text.String()
	}
}

// cleanToolResults drops a turn's tool results whose call was never
// declared, and repeated results of one call (the first one stays).
func cleanToolResults(s *session.Session, turn string) {
	declared, seen := map[string]bool{}, map[string]bool{}
	keep := s.Messages[:0]
	for _, m := range s.Messages {
		if m.Turn == turn && m.Role == chat.RoleAssistant {
			for _, tc := range m.ToolCalls {
				declared[tc.ID] = true
			}
		}
		if m.Turn == turn && m.Role == chat.RoleTool {
			if !declared[m.ToolCallID] || seen[m.ToolCallID] {
				continue
			}
			seen[m.ToolCallID] = true
		}
		keep = append(keep, m)
	}
	s.Messages = keep
}

// replaceInlineImages keeps data: URLs out of the session file, as nanobot does.
func replaceInlineImages(s *session.Session, turn string) {
	for i, m := range s.Messages {
		if m.Turn != turn || len(m.ContentParts) == 0 || !strings.Contains(string(m.ContentParts), `"data:`) {
			continue
		}
		var parts []map[string]any
		if json.Unmarshal(m.ContentParts, &parts) != nil {
			continue
		}
		for _, p := range parts {
			if iu, ok := p["image_url"].(map[string]any); ok {
				if u, _ := iu["url"].(string); strings.HasPrefix(u, "data:") {
					delete(p, "image_url")
					p["type"], p["text"] = "text", "[image]"
				}
			}
		}
		if raw, err := json.Marshal(parts); err == nil {
			s.Messages[i].ContentParts = raw
		}
	}
}

// addUsage keeps the session's token totals in its metadata, once per turn.
func addUsage(s *session.Session, turn string, prompt, completion int) {
	if prompt == 0 && completion == 0 {
		return
	}
	usage, _ := s.Metadata["usage"].(map[string]any)
	if usage == nil {
		usage = map[string]any{}
	}
	if usage["last_turn"] == turn {
		return
	}
	num := func(k string) int { f, _ := usage[k].(float64); n, _ := usage[k].(int); return int(f) + n }
	usage["prompt_tokens"] = num("prompt_tokens") + prompt
	usage["completion_tokens"] = num("completion_tokens") + completion
	usage["last_turn"] = turn
	s.Metadata["usage"] = usage
}

// Inject journals messages that arrived during the turn as one user
// message (consecutive messages merged with a blank line, as nanobot does).
func (a *Turn) Inject(ctx context.Context, in protocol.InjectInput) error {
	if in.GoalContinue {
		return a.journal.injectGoalContinue(ctx, in)
	}
	texts := make([]string, 0, len(in.Messages))
	for _, m := range in.Messages {
		texts = append(texts, m.Content)
	}
	msg := chat.Message{Role: chat.RoleUser, Content: strings.Join(texts, "\n\n"), Turn: in.Turn, EntryID: fmt.Sprintf("inject-%d", in.Cycle)}
	if _, err := a.store.Append(ctx, in.SessionKey, msg); err != nil {
		return fmt.Errorf("journal injected messages: %w", err)
	}
	for _, m := range in.Messages { // a chat page marks its queued message as taken in
		a.streams.Publish(channels.StreamEvent{SessionKey: in.SessionKey, Route: m.Route, Turn: in.Turn, Injected: []string{m.ID}})
	}
	return nil
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

// markSessionKind records what a session is for when its first turn is not a chat's.
func (j journal) markSessionKind(ctx context.Context, sess *session.Session, kind protocol.TurnKind) error {
	if kind == protocol.ChatTurn || sess.Kind == string(kind) {
		return nil
	}
	err := j.store.Update(ctx, sess.Key, func(s *session.Session) error { s.Kind = string(kind); return nil })
	if err != nil {
		return fmt.Errorf("mark session %s as %s: %w", sess.Key, kind.Name(), err)
	}
	return nil
}
