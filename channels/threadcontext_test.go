package channels

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestThreadContextIsGivenOncePerThread: the earlier messages go before the
// first mention in a thread, blank ones left out and long ones cut; the
// next mention there, or a thread that cannot be read, is the text alone.
func TestThreadContextIsGivenOncePerThread(t *testing.T) {
	tc := NewThreadContext("Chat", 0, slog.New(slog.DiscardHandler))
	asked := 0
	read := func(_ context.Context, limit int) ([]ThreadPost, error) {
		asked = limit
		return []ThreadPost{{Author: "<@U1>", Text: " first "}, {Author: "bot", Text: "  "}, {Author: "bot", Text: strings.Repeat("é", 501)}}, nil
	}
	got := tc.With(context.Background(), "C:1", "now?", read)
	require.Equal(t, "Chat thread context before this mention:\n- <@U1>: first\n- bot: "+strings.Repeat("é", 500)+"…\n\nCurrent message:\nnow?", got)
	require.Equal(t, 1, asked, "at least one message is asked for")
	require.Equal(t, "again", tc.With(context.Background(), "C:1", "again", read), "given once")
	failing := func(context.Context, int) ([]ThreadPost, error) { return nil, errors.New("gone") }
	require.Equal(t, "other", tc.With(context.Background(), "C:2", "other", failing))
}

// TestThreadAuthorNamesTheBot: the bot's own message is "bot", anyone
// else's as the platform shows them; an unknown bot id names no one "bot".
func TestThreadAuthorNamesTheBot(t *testing.T) {
	require.Equal(t, "bot", ThreadAuthor("B1", "B1", "<@B1>"))
	require.Equal(t, "<@U1>", ThreadAuthor("U1", "B1", "<@U1>"))
	require.Equal(t, "<>", ThreadAuthor("", "", "<>"))
}
