package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// What a chat allows without asking lives in its session's metadata: exact
// calls ("always") and prefix rules ("rule"), until /approvals clear or /new.
const (
	allowedKey = "approvals_allowed"
	// legacyAlwaysKey held earlier builds' first-word keys ("exec rm"): never honoured, dropped on clear.
	legacyAlwaysKey = "approvals_always"
)

// allowed is what a chat allows without asking.
type allowed struct {
	Exact []string `json:"exact,omitempty"` // exact keys: "exec rm -rf build"
	Rules []string `json:"rules,omitempty"` // prefix rules: "exec npm test"
}

func allowedOf(s *session.Session) allowed {
	var a allowed
	if raw, ok := s.Metadata[allowedKey]; ok {
		if b, err := json.Marshal(raw); err == nil {
			_ = json.Unmarshal(b, &a)
		}
	}
	return a
}

// covers reports whether a call with this exact key and candidate rule is allowed.
func (a allowed) covers(key, rule string) bool {
	return (key != "" && slices.Contains(a.Exact, key)) || (rule != "" && slices.Contains(a.Rules, rule))
}

func (a allowed) count() int { return len(a.Exact) + len(a.Rules) }

// allow records what an answer allows from now on (nothing for a plain approve).
func allow(s *session.Session, verdict, what string) {
	a := allowedOf(s)
	switch {
	case what == "":
		return
	case verdict == protocol.VerdictAlways && !slices.Contains(a.Exact, what):
		a.Exact = append(a.Exact, what)
	case verdict == protocol.VerdictRule && !slices.Contains(a.Rules, what):
		a.Rules = append(a.Rules, what)
	}
	if s.Metadata == nil {
		s.Metadata = map[string]any{}
	}
	s.Metadata[allowedKey] = map[string]any{"exact": toAny(a.Exact), "rules": toAny(a.Rules)}
}

func toAny(values []string) []any {
	out := make([]any, 0, len(values))
	for _, v := range values {
		out = append(out, v)
	}
	return out
}

// forgetAllowed drops everything the chat allowed, and how many there were.
func forgetAllowed(s *session.Session) int {
	n := allowedOf(s).count()
	delete(s.Metadata, allowedKey)
	delete(s.Metadata, legacyAlwaysKey)
	return n
}

// cmdApprovals answers "/approvals" (what runs without asking here) and
// "/approvals clear" (forget it: only a person of the session may).
func (c *Commands) cmdApprovals(ctx context.Context, in protocol.StepInput, args string) (string, error) {
	switch strings.TrimSpace(args) {
	case "":
		sess, err := c.load(ctx, in.SessionKey)
		if err != nil {
			return "", err
		}
		return allowedListing(allowedOf(sess)), nil
	case "clear":
	default:
		return "Usage: /approvals [clear]", nil
	}
	if by, why := c.vouch(in); by == "" {
		c.refused(in, "/approvals clear", why)
		return clearRefusedText, nil
	}
	n := 0
	err := c.store.Update(ctx, in.SessionKey, func(s *session.Session) error {
		n = forgetAllowed(s)
		return nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Forgot %d approval(s): every risky call asks again.", n), nil
}

func allowedListing(a allowed) string {
	var lines []string
	for _, k := range a.Exact {
		lines = append(lines, "- always: "+chat.Preview(k, 200))
	}
	for _, r := range a.Rules {
		lines = append(lines, "- rule: "+protocol.RuleText(r))
	}
	return listing("Allowed in this chat without asking (/approvals clear forgets them):", "Nothing runs here without asking.", lines)
}
