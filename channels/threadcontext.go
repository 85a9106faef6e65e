package channels

import (
	"context"
	"log/slog"
	"strings"
)

// ThreadContext gives the model, the first time the bot is addressed in a
// thread, the thread's earlier messages, in nanobot's words
// (includeThreadContext, threadContextLimit): Slack and Mattermost.
type ThreadContext struct {
	// Platform names the block ("Slack thread context before this mention").
	Platform string
	// Limit is how many messages are asked for (at least one).
	Limit int
	Log   *slog.Logger
	given *RecentKeys // threads whose context the model was given
}

// NewThreadContext is the context of platform's threads, each given once.
func NewThreadContext(platform string, limit int, log *slog.Logger) *ThreadContext {
	return &ThreadContext{Platform: platform, Limit: max(1, limit), Log: log, given: NewRecentKeys(10_000)}
}

// ThreadPost is an earlier message of a thread: who wrote it ("bot",
// "<@U1>") and what.
type ThreadPost struct{ Author, Text string }

// ThreadAuthor is how an earlier message names its author: "bot" for the
// bot's own (userID is botID), else shown, the platform's way of naming userID.
func ThreadAuthor(userID, botID, shown string) string {
	if userID != "" && userID == botID {
		return "bot"
	}
	return shown
}

// maxThreadPostRunes cuts a long earlier message, as nanobot does.
const maxThreadPostRunes = 500

// With puts the earlier messages of thread before text, the first time
// only; read fetches at most limit of them, oldest first. Blank ones are
// left out; without any (or when read fails, logged) text is as it was.
func (t *ThreadContext) With(ctx context.Context, thread, text string, read func(ctx context.Context, limit int) ([]ThreadPost, error)) string {
	if t.given.Add(thread) {
		return text // given before
	}
	posts, err := read(ctx, t.Limit)
	if err != nil {
		t.Log.Warn(strings.ToLower(t.Platform)+" thread context unavailable", "thread", thread, "error", err)
		return text
	}
	var lines []string
	for _, p := range posts {
		body := strings.TrimSpace(p.Text)
		if r := []rune(body); len(r) > maxThreadPostRunes {
			body = string(r[:maxThreadPostRunes]) + "…"
		}
		if body != "" {
			lines = append(lines, "- "+p.Author+": "+body)
		}
	}
	if len(lines) == 0 {
		return text
	}
	return t.Platform + " thread context before this mention:\n" + strings.Join(lines, "\n") + "\n\nCurrent message:\n" + text
}
