package web

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/tools"
)

// maxListed bounds the sidebar's list (newest first).
const maxListed = 100

// hintMax bounds a tool hint's argument, as the live hints are.
const hintMax = 40

// item is one line of a conversation as the page draws it: a user or
// assistant message, or a tool progress line ("hint").
type item struct {
	Role    string `json:"role"`
	Text    string `json:"text"`
	HTML    string `json:"html,omitempty"` // an answer's Markdown rendered (markdown.WebHTML)
	Turn    string `json:"turn,omitempty"`
	Command bool   `json:"command,omitempty"`
	// Index is the message's place in the journal: where a fork ends.
	Index int `json:"index"`
	// Media are the files the message carried, drawn inline.
	Media []mediaView `json:"media,omitempty"`
}

// mediaView is a file a message carried: Name is its name in <workspace>/media (GET /api/media?name=).
type mediaView struct {
	Kind string `json:"kind"` // image, file or voice
	Name string `json:"name"`
}

// mediaLine is how the journal notes a message's file (activities' userContent): "[image: /path]".
var mediaLine = regexp.MustCompile(`^\[(image|file|voice): (.+)\]$`)

// splitMedia takes a user message's file lines out of its text.
func splitMedia(content string) (string, []mediaView) {
	var text []string
	var files []mediaView
	for _, line := range strings.Split(content, "\n") {
		if m := mediaLine.FindStringSubmatch(line); m != nil && mediaNames.MatchString(filepath.Base(m[2])) {
			files = append(files, mediaView{Kind: m[1], Name: filepath.Base(m[2])})
			continue
		}
		text = append(text, line)
	}
	return strings.Join(text, "\n"), files
}

// history is a conversation from the journal: what was said, and the
// tool calls as the progress lines they were shown as.
func (c *Channel) history(ctx context.Context, key string) ([]item, error) {
	s, err := c.store.Load(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	out := []item{}
	for i, m := range s.Messages {
		switch m.Role {
		case chat.RoleUser:
			text, files := splitMedia(m.Content)
			out = append(out, item{Role: "user", Text: text, Turn: m.Turn, Command: m.Command, Index: i, Media: files})
		case chat.RoleAssistant:
			for _, tc := range m.ToolCalls {
				if h := tools.Hint(tc.Function.Name, tc.Function.Arguments, hintMax); h != "" {
					out = append(out, item{Role: "hint", Text: h, Turn: m.Turn, Index: i})
				}
			}
			if strings.TrimSpace(m.Content) != "" {
				out = append(out, item{Role: "assistant", Text: m.Content, HTML: markdown.WebHTML(m.Content), Turn: m.Turn, Command: m.Command, Index: i})
			}
		}
	}
	return out, nil
}
