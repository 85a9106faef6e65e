package session

import (
	"sort"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
)

// Visible is one message a person saw in a conversation: a user message or
// an assistant reply with text, without commands and tool traffic (what
// nanobot's session tools read).
type Visible struct {
	// Index is the message's position in the journal (its row on the database).
	Index     int
	Role      string
	Timestamp string
	Content   string
}

// VisibleMessages are the messages of msgs a person saw, in order.
func VisibleMessages(msgs []chat.Message) []Visible {
	var out []Visible
	for i, m := range msgs {
		if v, ok := visible(i, m); ok {
			out = append(out, v)
		}
	}
	return out
}

func visible(index int, m chat.Message) (Visible, bool) {
	if m.Command || (m.Role != chat.RoleUser && m.Role != chat.RoleAssistant) {
		return Visible{}, false
	}
	text := strings.TrimSpace(m.Content)
	if text == "" {
		return Visible{}, false
	}
	return Visible{Index: index, Role: m.Role, Timestamp: m.Timestamp, Content: text}, true
}

// TitleChars bounds a session's title (nanobot cuts titles at 160).
const TitleChars = 160

// Title is how a session is named in lists: the title its metadata holds,
// else the first line of its first user message.
func Title(metadata map[string]any, msgs []Visible) string {
	if t, ok := metadata["title"].(string); ok && strings.TrimSpace(t) != "" {
		return chat.Cut(strings.TrimSpace(t), TitleChars)
	}
	for _, m := range msgs {
		if m.Role == chat.RoleUser {
			line, _, _ := strings.Cut(m.Content, "\n")
			return chat.Cut(strings.TrimSpace(line), TitleChars)
		}
	}
	return ""
}

// Match is a session whose visible messages contain a searched text.
type Match struct {
	Key      string
	Title    string
	Modified time.Time
	// Messages are the last matching messages (at most MatchMessages).
	Messages []Visible
}

// MatchMessages is how many matching messages a Match keeps (nanobot: 2).
const MatchMessages = 2

// Searcher is a store that finds conversations by text.
type Searcher interface {
	// Search returns the chat sessions (kind "") other than exclude whose
	// visible messages contain query, case-insensitively, most recently
	// changed first, at most limit of them.
	Search(query, exclude string, limit int) ([]Match, error)
	// HandleSources are the chat sessions (kind "") as Handles draws for them.
	HandleSources() ([]HandleSource, error)
}

// matchIn is the session's Match for a folded needle, if it has one.
func matchIn(s *Session, needle string, modified time.Time) (Match, bool) {
	msgs := VisibleMessages(s.Messages)
	var hits []Visible
	for _, m := range msgs {
		if strings.Contains(strings.ToLower(m.Content), needle) {
			hits = append(hits, m)
		}
	}
	if len(hits) == 0 {
		return Match{}, false
	}
	return Match{Key: s.Key, Title: Title(s.Metadata, msgs), Modified: modified, Messages: hits[max(0, len(hits)-MatchMessages):]}, true
}

// NewestFirst orders listed sessions by their last change, newest first.
func NewestFirst(infos []Info) {
	sort.Slice(infos, func(i, j int) bool {
		if !infos[i].Modified.Equal(infos[j].Modified) {
			return infos[i].Modified.After(infos[j].Modified)
		}
		return infos[i].Key < infos[j].Key
	})
}
