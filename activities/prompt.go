package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/skills"
	"github.com/nanobot-durable/nanobot/tokens"
)

// summaryKey holds a session's archived summary in its metadata:
// {"text": …, "cursor": history entry, "at": timestamp}.
const summaryKey = "_last_summary"

// lastSummary reads the archived summary consolidation or idle compaction left.
func lastSummary(s *session.Session) (text string, cursor int) {
	m, _ := s.Metadata[summaryKey].(map[string]any)
	text, _ = m["text"].(string)
	switch c := m["cursor"].(type) {
	case float64:
		cursor = int(c)
	case int:
		cursor = c
	}
	return text, cursor
}

func setLastSummary(s *session.Session, text string, cursor int, at string) {
	s.Metadata[summaryKey] = map[string]any{"text": text, "cursor": cursor, "at": at}
}

// Prompts builds system prompts and counts what a session's next prompt costs.
type Prompts struct {
	builder prompt.Builder
	tools   *Toolbox // the definitions that travel with every request
	journal          // the last turn's prompt, where the workspace is on another host
}

// system builds the turn's system prompt from the workspace and the session.
func (p *Prompts) system(in protocol.StepInput, sess *session.Session) (string, error) {
	text, cursor := lastSummary(sess)
	return p.builder.SystemPrompt(prompt.Request{
		Channel: in.Message.Route.Channel, SessionKey: in.SessionKey, Message: in.Message.Content,
		Budget: inputBudget(in.Settings), Summary: text, SummaryCursor: cursor,
		Count: tokens.For(in.Settings.Model).Text,
	})
}

// tokens is the size of the session's next prompt: the system prompt,
// the replayed history, extra (the message about to be added) with its
// runtime context, and the tool definitions.
func (p *Prompts) tokens(ctx context.Context, in protocol.StepInput, sess *session.Session, extra string) (int, error) {
	count := tokens.For(in.Settings.Model)
	profile := protocol.ProfileFor(in.Message.Kind, false)
	system, defs, err := p.current(ctx, in, sess, profile)
	if err != nil {
		return 0, err
	}
	n := count.Messages([]chat.Message{{Role: chat.RoleSystem, Content: system}})
	for _, m := range sess.History(0, nil) {
		n += count.Message(prompt.WithMessageTime(m))
	}
	if extra != "" {
		rc := prompt.RuntimeContext(in.Message.Route.Channel, in.Message.Route.ChatID, time.Now(), in.Settings.Timezone)
		n += count.Message(chat.Message{Role: chat.RoleUser, Content: extra + "\n\n" + rc})
	}
	n += count.Tools(p.tools.policy(profile).Offer(defs))
	return n, nil
}

// current is the system prompt and tools the session's next request
// carries: built here from the workspace, or, when the workspace is on
// another host, the ones its last turn journaled (none for a new session).
func (p *Prompts) current(ctx context.Context, in protocol.StepInput, sess *session.Session, profile protocol.Profile) (string, []chat.ToolDefinition, error) {
	if in.Settings.WorkspaceQueue == "" {
		system, err := p.system(in, sess)
		return system, p.tools.forKind(profile.Kind).Definitions(), err
	}
	turn := ""
	for i := len(sess.Messages) - 1; i >= 0 && turn == ""; i-- {
		turn = sess.Messages[i].Turn
	}
	if turn == "" {
		return "", nil, nil
	}
	system, err := p.store.TurnData(ctx, in.SessionKey, turn, "system")
	if err != nil {
		return "", nil, nil // pruned or never built: the history is most of the size
	}
	defs, err := journaledTools(ctx, p.journal, in.SessionKey, turn)
	if err != nil {
		defs = nil
	}
	return string(system), defs, nil
}

// cmdSkill lists the skills: available ones first, then those that are not.
func (c *Commands) cmdSkill(_ context.Context, _ protocol.StepInput, _ string) (string, error) {
	list, err := c.prompts.builder.Skills()
	if err != nil {
		return "", err
	}
	lines := make([]string, 0, len(list))
	for _, s := range list {
		where := "built-in"
		if s.Source == skills.SourceWorkspace {
			where = "workspace"
		}
		switch {
		case s.Invalid != "":
			lines = append(lines, fmt.Sprintf("✗ %s (%s) — invalid: %s", s.Name, where, s.Invalid))
		case len(s.Missing) > 0:
			lines = append(lines, fmt.Sprintf("✗ %s (%s) — %s (unavailable: %s)", s.Name, where, s.Description, strings.Join(s.Missing, ", ")))
		case s.Always:
			lines = append(lines, fmt.Sprintf("✓ %s (%s, always on) — %s", s.Name, where, s.Description))
		default:
			lines = append(lines, fmt.Sprintf("✓ %s (%s) — %s", s.Name, where, s.Description))
		}
	}
	return listing("Skills (use one in a message with $name):", "No skills installed.", lines), nil
}
