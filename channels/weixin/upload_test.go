package weixin

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/weixin/weixinpeer"
)

// TestFilesOutUploaded: a workspace image and a document are encrypted,
// put on the CDN via getuploadurl and sent as their own items; a missing
// file is named as not sent; a URL goes as a link.
func TestFilesOutUploaded(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(weixinpeer.Message{From: alice, Text: "send me the chart"})
	h.WaitPublished(1)
	png := []byte("\x89PNG\r\n\x1a\na chart of sixteen+ bytes")
	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "chart.png"), png, 0o644))
	doc := filepath.Join(h.Workspace, "notes.txt")
	require.NoError(t, os.WriteFile(doc, []byte("exactly sixteen!"), 0o644))

	r := reply(alice, "t9", "Here it is.")
	r.Media = []string{"chart.png", doc, "gone.pdf", "https://example.org/a.pdf"}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	sent := h.peer.Sent(alice)
	require.Len(t, sent, 5, "four files, then the text")
	require.Equal(t, []weixinpeer.File{{Type: itemImage, Data: png}}, sent[0].Files)
	require.Equal(t, []weixinpeer.File{{Type: itemFile, Name: "notes.txt", Data: []byte("exactly sixteen!")}}, sent[1].Files)
	require.Equal(t, "[file: gone.pdf - send failed]", sent[2].Text)
	require.Equal(t, "https://example.org/a.pdf", sent[3].Text)
	require.Equal(t, "Here it is.", sent[4].Text)
	require.Equal(t, 2, h.peer.Calls("getuploadurl"))

	h.peer.Fail("upload", 500)
	r = reply(alice, "t10", "")
	r.Media = []string{"chart.png"}
	var se *channels.SendError
	require.ErrorAs(t, channels.Deliver(context.Background(), h.Ch, r), &se)
	require.False(t, se.Permanent, "a CDN 5xx is retried")
}
