package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
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

// maxPage bounds a page of history (?limit=).
const maxPage = 1000

// pageParams reads ?before= (a journal index: the page ends before it) and
// ?limit= (how many lines at most; 0: all).
func pageParams(r *http.Request) (before, limit int, err error) {
	for _, p := range []struct {
		name string
		to   *int
		max  int
	}{{"before", &before, math.MaxInt}, {"limit", &limit, maxPage}} {
		v := r.URL.Query().Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > p.max {
			return 0, 0, fmt.Errorf("%s=%q: want a number from 1 to %d", p.name, v, p.max)
		}
		*p.to = n
	}
	return before, limit, nil
}

// page keeps the last limit lines before the journal index before (0: the
// end), never splitting a message's lines; more says older ones are left.
func page(items []item, before, limit int) ([]item, bool) {
	if before > 0 {
		end := sort.Search(len(items), func(i int) bool { return items[i].Index >= before })
		items = items[:end]
	}
	if limit == 0 || len(items) <= limit {
		return items, false
	}
	cut := len(items) - limit
	for cut > 0 && items[cut-1].Index == items[cut].Index {
		cut--
	}
	return items[cut:], cut > 0
}

// render draws the answers of a page (markdown.WebHTML), only the lines sent.
func render(items []item) {
	for i := range items {
		if items[i].Role == "assistant" {
			items[i].HTML = markdown.WebHTML(items[i].Text)
		}
	}
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
				out = append(out, item{Role: "assistant", Text: m.Content, Turn: m.Turn, Command: m.Command, Index: i})
			}
		}
	}
	return out, nil
}
