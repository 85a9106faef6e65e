package matrix

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// TestImageInIsDownloadedForTheModel: an m.image from an admitted sender
// is fetched from the content repository into <workspace>/media and
// handed to the agent as the message's media.
func TestImageInIsDownloadedForTheModel(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	data := pngBytes(t)
	mxc := h.alice.Upload(t, data, "image/png", "cat.png")
	sent := h.alice.Send(t, room, "m.room.message", map[string]any{"msgtype": "m.image", "body": "cat.png", "url": mxc,
		"info": map[string]any{"mimetype": "image/png", "size": len(data)}})
	in := h.waitInbound(1)[0]
	require.Equal(t, "[image: cat.png]", in.Content)
	require.Len(t, in.Media, 1)
	require.Equal(t, filepath.Join(h.env.Workspace, "media"), filepath.Dir(in.Media[0]))
	require.True(t, strings.HasSuffix(in.Media[0], "-cat.png"), in.Media[0])
	got, err := os.ReadFile(in.Media[0])
	require.NoError(t, err)
	require.Equal(t, data, got)
	require.Equal(t, sent, in.Route.ReplyTo)
}

// TestFileCaptionAndTooLarge: a file with a caption keeps the caption; a
// file over maxMediaBytes is not downloaded and the text says so.
func TestFileCaptionAndTooLarge(t *testing.T) {
	h := startHarness(t, map[string]any{"maxMediaBytes": 1000})
	room := h.dm(h.alice)
	small := h.alice.Upload(t, []byte("notes"), "text/plain", "notes.txt")
	h.alice.Send(t, room, "m.room.message", map[string]any{"msgtype": "m.file", "body": "read this", "filename": "notes.txt", "url": small})
	big := h.alice.Upload(t, bytes.Repeat([]byte("x"), 2000), "text/plain", "big.txt")
	h.alice.Send(t, room, "m.room.message", map[string]any{"msgtype": "m.file", "body": "big.txt", "url": big})
	got := h.waitInbound(2)
	require.Equal(t, "read this", got[0].Content)
	require.Len(t, got[0].Media, 1)
	require.Equal(t, "[file: big.txt - too large]", got[1].Content)
	require.Empty(t, got[1].Media)
	entries, err := os.ReadDir(filepath.Join(h.env.Workspace, "media"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing of the big file left behind")
}

// TestStrangerFileIsNotDownloaded: files are fetched only for senders the
// manager let in.
func TestStrangerFileIsNotDownloaded(t *testing.T) {
	h := startHarness(t, nil)
	room := h.alice.CreateRoom(t, false, h.bot, h.bob)
	h.bob.Join(t, room)
	h.waitLog("matrix joined a room on invite", room)
	mxc := h.bob.Upload(t, []byte("spam"), "text/plain", "spam.txt")
	h.bob.Send(t, room, "m.room.message", map[string]any{"msgtype": "m.file", "body": "spam.txt", "url": mxc})
	h.alice.SendText(t, room, "after")
	h.waitInbound(1)
	h.waitLog("message refused: sender not allowed", h.bob.ID)
	_, err := os.Stat(filepath.Join(h.env.Workspace, "media"))
	require.True(t, os.IsNotExist(err), "no media folder: nothing was downloaded")
}

// TestFilesOut: a reply's workspace file is uploaded and sent as m.image
// or m.file (its bytes readable from the content repository) before the
// text; a missing file is named in the room instead of failing the reply.
func TestFilesOut(t *testing.T) {
	h := startHarness(t, nil)
	room := h.dm(h.alice)
	h.alice.SendText(t, room, "send me files")
	in := h.waitInbound(1)[0]
	data := pngBytes(t)
	require.NoError(t, os.WriteFile(filepath.Join(h.env.Workspace, "chart.png"), data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(h.env.Workspace, "report.txt"), []byte("the report"), 0o644))
	h.answer(in, "turn-1", "Here they are.", "chart.png", "report.txt", "missing.pdf")
	mine, _ := h.lastShows(room, "Here they are.")
	require.Len(t, mine, 4)
	require.Equal(t, "m.image", mine[0].String("msgtype"))
	require.Equal(t, "chart.png", mine[0].Body())
	require.Equal(t, in.Route.ReplyTo, mine[0].ReplyTo(), "the reply's first event answers the user's")
	require.Equal(t, data, h.alice.Download(t, mine[0].String("url")))
	require.Equal(t, "m.file", mine[1].String("msgtype"))
	require.Equal(t, "the report", string(h.alice.Download(t, mine[1].String("url"))))
	require.Equal(t, "(file not sent: missing.pdf)", mine[2].Body())
	require.Equal(t, "Here they are.", mine[3].Body())
	require.Empty(t, mine[3].ReplyTo())
}
