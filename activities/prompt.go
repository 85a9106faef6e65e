package activities

import (
	"context"
	"fmt"
	"strings"

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

// systemPrompt builds the turn's system prompt from the workspace and the session.
func (a *Activities) systemPrompt(in protocol.StepInput, sess *session.Session) (string, error) {
	text, cursor := lastSummary(sess)
	return a.Prompt.SystemPrompt(prompt.Request{
		Channel: in.Message.Route.Channel, SessionKey: in.SessionKey, Message: in.Message.Content,
		Budget: inputBudget(in.Settings), Summary: text, SummaryCursor: cursor,
		Count: tokens.For(in.Settings.Model).Text,
	})
}

// cmdSkill lists the skills: available ones first, then those that are not.
func (a *Activities) cmdSkill(_ context.Context, _ protocol.StepInput, _ string) (string, error) {
	list, err := a.Prompt.Skills()
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "No skills installed.", nil
	}
	var b strings.Builder
	b.WriteString("Skills (use one in a message with $name):")
	for _, s := range list {
		where := "built-in"
		if s.Source == skills.SourceWorkspace {
			where = "workspace"
		}
		switch {
		case s.Invalid != "":
			fmt.Fprintf(&b, "\n✗ %s (%s) — invalid: %s", s.Name, where, s.Invalid)
		case len(s.Missing) > 0:
			fmt.Fprintf(&b, "\n✗ %s (%s) — %s (unavailable: %s)", s.Name, where, s.Description, strings.Join(s.Missing, ", "))
		case s.Always:
			fmt.Fprintf(&b, "\n✓ %s (%s, always on) — %s", s.Name, where, s.Description)
		default:
			fmt.Fprintf(&b, "\n✓ %s (%s) — %s", s.Name, where, s.Description)
		}
	}
	return b.String(), nil
}
