package activities

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tokens"
	"github.com/nanobot-durable/nanobot/usage"
)

// ConsolidationPrompt instructs the model that summarizes archived messages.
const ConsolidationPrompt = "You are a memory consolidation agent. The user message holds an excerpt of a conversation " +
	"that is leaving the active context. Write a concise summary for the long-term history log: facts about the user, " +
	"decisions, names, dates, numbers, open tasks and preferences, in the conversation's language. " +
	"Write plain text, no preamble. If nothing is worth keeping, reply exactly (nothing)."

// nothingSummary is the model's way to say the excerpt holds nothing to keep.
const nothingSummary = "(nothing)"

// Session metadata keys of consolidation: the round in flight (its range,
// fixed before the model is asked, so a retry archives the same messages)
// and the last round that completed.
const (
	pendingKey = "_consolidating"
	doneKey    = "_last_consolidation"
)

// Memory is consolidation into memory/history.jsonl: the rounds a turn
// (or /new, or idle compaction) asks for, the next prompt's size, and the
// sessions idle long enough to compact.
type Memory struct {
	journal
	models    ModelSource
	prompts   *Prompts
	workspace string
	archive   memory.Archive
	usage     usageLog
	client    client.Client         // idle compaction skips sessions whose turn runs
	config    func() *config.Config // idle compaction's settings, when it fires
	log       *slog.Logger
}

// Consolidate runs one round: it picks whole user turns after
// last_consolidated, has the model summarize them (tools off), appends the
// summary to memory/history.jsonl and advances last_consolidated. Any model
// failure archives the messages raw instead; "(nothing)" stores nothing.
// A retried round finds its range and its entry and archives nothing twice.
func (a *Memory) Consolidate(ctx context.Context, in protocol.ConsolidateInput) (protocol.ConsolidateResult, error) {
	id := fmt.Sprintf("%s/%s/%d", in.Turn, in.Reason, in.Round)
	var res protocol.ConsolidateResult
	sess, err := a.load(ctx, in.SessionKey)
	if err != nil {
		return res, err
	}
	if done, _ := sess.Metadata[doneKey].(string); done == id {
		return a.consolidated(ctx, in, sess, res)
	}
	start, end, ok := pendingRange(sess, id)
	if !ok {
		start, end = a.pickRange(ctx, in, sess)
		err := a.store.Update(ctx, in.SessionKey, func(s *session.Session) error {
			s.Metadata[pendingKey] = map[string]any{"id": id, "start": start, "end": end}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("record consolidation range: %w", err)
		}
	}
	chunk := archivable(sess.Messages[min(start, len(sess.Messages)):min(end, len(sess.Messages))])
	res.Archived = len(chunk)
	entry, stored, err := a.archive.Find(ctx, id)
	if err != nil {
		return res, err
	}
	if !stored && len(chunk) > 0 {
		text, raw := a.summarize(ctx, in, chunk)
		res.Raw = raw
		if strings.TrimSpace(text) == nothingSummary {
			res.Nothing = true
		} else {
			entry, err = a.archive.Append(ctx, memory.Entry{Content: text, SessionKey: in.SessionKey, ID: id})
			if err != nil {
				return res, fmt.Errorf("archive to history: %w", err)
			}
			stored = true
		}
	}
	err = a.store.Update(ctx, in.SessionKey, func(s *session.Session) error {
		s.LastConsolidated = max(s.LastConsolidated, min(end, len(s.Messages)))
		delete(s.Metadata, pendingKey)
		s.Metadata[doneKey] = id
		if stored {
			setLastSummary(s, entry.Content, entry.Cursor, entry.Timestamp)
		}
		sess = s
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("advance last_consolidated: %w", err)
	}
	if stored {
		res.Cursor, res.SummaryPreview = entry.Cursor, chat.Preview(entry.Content, 400)
	}
	a.log.Info("consolidated", "session", in.SessionKey, "reason", in.Reason, "round", in.Round,
		"messages", res.Archived, "raw", res.Raw, "nothing", res.Nothing, "cursor", res.Cursor)
	return a.consolidated(ctx, in, sess, res)
}

// consolidated fills in the prompt size after a round.
func (a *Memory) consolidated(ctx context.Context, in protocol.ConsolidateInput, sess *session.Session, res protocol.ConsolidateResult) (protocol.ConsolidateResult, error) {
	n, err := a.prompts.tokens(ctx, protocol.StepInput{SessionKey: in.SessionKey, Settings: in.Settings}, sess, "")
	res.PromptTokens = n
	return res, err
}

func pendingRange(s *session.Session, id string) (start, end int, ok bool) {
	p, _ := s.Metadata[pendingKey].(map[string]any)
	if p == nil || p["id"] != id {
		return 0, 0, false
	}
	f, _ := p["start"].(float64)
	g, _ := p["end"].(float64)
	return int(f), int(g), true
}

// archivable leaves command rows out of an archive.
func archivable(msgs []chat.Message) []chat.Message {
	var out []chat.Message
	for _, m := range msgs {
		if !m.Command {
			out = append(out, m)
		}
	}
	return out
}

// pickRange chooses the messages a round archives: everything (/new), all
// but the last few (idle), or whole user turns from last_consolidated until
// the prompt would be under the target. Archiving stops where the replay
// floor starts (those messages replay anyway) and a chunk stays small
// enough to be summarized within the context window.
func (a *Memory) pickRange(ctx context.Context, in protocol.ConsolidateInput, sess *session.Session) (int, int) {
	msgs := sess.Messages
	start := min(sess.LastConsolidated, len(msgs))
	switch in.Reason {
	case protocol.ConsolidateNew:
		return start, len(msgs)
	case protocol.ConsolidateIdle:
		end := len(msgs) - protocol.IdleKeepMessages
		for end > start && msgs[end].Role != chat.RoleUser {
			end--
		}
		return start, max(end, start)
	}
	count := tokens.For(in.Settings.Model)
	now, err := a.prompts.tokens(ctx, protocol.StepInput{SessionKey: in.SessionKey, Settings: in.Settings}, sess, "")
	if err != nil {
		return start, start
	}
	need := now - in.Target
	if need <= 0 {
		return start, start
	}
	limit := session.ReplayFloor(msgs)
	chunkCap := inputBudget(in.Settings) * 3 / 4
	end, removed := start, 0
	for i := start; i < limit; i++ {
		if i > start && msgs[i].Role == chat.RoleUser && !msgs[i].Command {
			if removed > chunkCap && end > start {
				break // summarize what we have; the next round takes the rest
			}
			end = i
			if removed >= need {
				break
			}
		}
		if !msgs[i].Command {
			removed += count.Message(msgs[i])
		}
	}
	return start, end
}

// summarize asks the model for a summary without tools; any failure
// (error, cut-off, tool calls, empty text) falls back to the raw archive.
func (a *Memory) summarize(ctx context.Context, in protocol.ConsolidateInput, chunk []chat.Message) (string, bool) {
	raw := memory.RawArchive(chunk)
	if a.models == nil {
		return raw, true
	}
	model, err := a.models.Model(in.Settings.Model)
	if err != nil {
		a.log.Warn("consolidation: no model; archiving raw", "session", in.SessionKey, "error", err)
		return raw, true
	}
	req := providers.Request{
		Model: model.APIModel, Temperature: model.Temperature, MaxTokens: min(in.Settings.MaxTokens, 2048),
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: ConsolidationPrompt},
			{Role: chat.RoleUser, Content: transcript(chunk, inputBudget(in.Settings)*3/4, tokens.For(in.Settings.Model))},
		},
	}
	started := time.Now()
	resp, err := model.Provider.Chat(ctx, req, nil)
	if err != nil {
		a.log.Warn("consolidation: the model failed; archiving raw", "session", in.SessionKey, "error", err)
		return raw, true
	}
	rec := a.recordConsolidationUsage(in, req, resp)
	if m := metricsOf(ctx); m != nil { // a summary call costs tokens like a turn's
		countModelUse(m, rec.Model, rec.Prompt, rec.Completion, rec.Cached, time.Since(started))
	}
	text := strings.TrimSpace(resp.Content)
	switch {
	case resp.FinishReason == providers.FinishLength || resp.FinishReason == "error" || len(resp.ToolCalls) > 0 || text == "":
		a.log.Warn("consolidation: unusable summary; archiving raw", "session", in.SessionKey, "finish", resp.FinishReason, "tool_calls", len(resp.ToolCalls))
		return raw, true
	}
	return chat.Cut(text, memory.MaxSummaryChars), false
}

// recordConsolidationUsage adds the summary call to the usage file, keyed by
// the round so a retried round is counted once; it never fails the round.
func (a *Memory) recordConsolidationUsage(in protocol.ConsolidateInput, req providers.Request, resp *providers.Response) usage.Record {
	rec := sideCallUsage(usage.Record{
		Session: in.SessionKey, Turn: in.Turn, Call: fmt.Sprintf("consolidate/%s/%d", in.Reason, in.Round),
		Model: in.Settings.Model, Kind: usage.KindConsolidate,
	}, req, resp)
	a.usage.add(rec)
	return rec
}

// transcript renders messages for the summarizer, oldest first, cut to fit limit tokens.
func transcript(msgs []chat.Message, limit int, count *tokens.Counter) string {
	var lines []string
	used := 0
	for _, m := range msgs {
		text := m.Content
		if text == "" && len(m.ToolCalls) > 0 {
			var names []string
			for _, c := range m.ToolCalls {
				names = append(names, c.Function.Name+"("+chat.Preview(c.Function.Arguments, 200)+")")
			}
			text = "called " + strings.Join(names, ", ")
		}
		if m.Role == chat.RoleTool {
			text = chat.Preview(text, 1000)
		}
		line := fmt.Sprintf("[%s] %s: %s", shortTime(m.Timestamp), strings.ToUpper(m.Role), text)
		n := count.Text(line)
		if used+n > limit {
			line = chat.Preview(line, max((limit-used)*2, 200))
			lines = append(lines, line, "(the rest of the excerpt was cut to fit)")
			break
		}
		used += n
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func shortTime(ts string) string {
	for _, layout := range []string{session.TimeLayout, time.RFC3339Nano} {
		if t, err := time.Parse(layout, ts); err == nil {
			return t.Format("2006-01-02 15:04")
		}
	}
	return "?"
}

// Measure tells how big the session's next prompt is, so after SAVE the
// workflow can consolidate at once rather than make the next turn wait.
func (a *Memory) Measure(ctx context.Context, in protocol.StepInput) (protocol.MeasureResult, error) {
	sess, err := a.load(ctx, in.SessionKey)
	if err != nil {
		return protocol.MeasureResult{}, err
	}
	n, err := a.prompts.tokens(ctx, in, sess, "")
	if err != nil {
		return protocol.MeasureResult{}, fmt.Errorf("measure the prompt of session %s: %w", in.SessionKey, err)
	}
	return protocol.MeasureResult{PromptTokens: n, Budget: inputBudget(in.Settings)}, nil
}
