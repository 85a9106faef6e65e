package matrix

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestLongestPartFitsOneEvent: a part of MaxMessageRunes of the widest
// runes, formatted, is accepted by the homeserver (its HTML dropped to fit
// the 64 KiB event limit), as an event and as an edit.
func TestLongestPartFitsOneEvent(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	text := "**" + strings.Repeat("😀", MaxMessageRunes-4) + "**"
	require.Greater(t, size(textContent(text)), maxContentBytes, "too big with its HTML")
	route := protocol.Route{Channel: Name, ChatID: room}
	eventID, err := h.ch.SendPart(context.Background(), channels.Reply{Route: route}, channels.Part{Text: text})
	require.NoError(t, err)
	require.NoError(t, h.ch.send(context.Background(), room, editContent(eventID, text)))
	mine, _ := h.lastShows(room, text)
	require.Len(t, mine, 1)
	require.Equal(t, text, mine[0].Body())
	require.Empty(t, mine[0].String("formatted_body"))
	short := textContent("**short**")
	require.Same(t, short, slim(short, maxContentBytes), "a content that fits keeps its HTML")
}
