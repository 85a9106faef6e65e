package wecom

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/wecom/wecompeer"
)

func TestImageInIsDecryptedAndSaved(t *testing.T) {
	h := startHarness(t, nil)
	png := []byte("\x89PNG\r\n\x1a\nnot really a cat, 33 bytes long!!")
	img := h.peer.AddFile("cat.png", png)
	_, id := h.peer.Say(wecompeer.Message{From: alice, MsgType: "image", Image: img})
	got := h.WaitPublished(1)[0]
	want := filepath.Join(h.Workspace, "media", "wecom-"+id+"-0-cat.png")
	require.Equal(t, []string{want}, got.Media)
	data, err := os.ReadFile(want)
	require.NoError(t, err)
	require.Equal(t, png, data, "decrypted with the callback's aeskey")
	require.Equal(t, "[image: wecom-"+id+"-0-cat.png]", got.Content)
	require.Equal(t, "image", got.Metadata["msg_type"])
}

func TestFileVoiceAndMixedIn(t *testing.T) {
	h := startHarness(t, nil)
	doc := h.peer.AddFile("ignored.bin", []byte("%PDF-1.4 fake"))
	doc.Name = "../../report.pdf" // the callback's name wins, and cannot leave media/
	_, fileID := h.peer.Say(wecompeer.Message{From: alice, MsgType: "file", File: doc})
	bad := h.peer.AddFile("x.txt", []byte("data"))
	bad.AESKey = "c2hvcnQ=" // not a 32-byte key
	bad.Name = "x.txt"
	h.peer.Say(wecompeer.Message{From: alice, MsgType: "file", File: bad})
	h.peer.Say(wecompeer.Message{From: alice, MsgType: "voice", Voice: "transcribed text here"})
	img := h.peer.AddFile("photo.png", []byte("png bytes"))
	_, mixedID := h.peer.Say(wecompeer.Message{From: alice, MsgType: "mixed",
		Items: []wecompeer.Item{{Text: "hello wecom"}, {Image: img}}})
	got := h.WaitPublished(4)

	require.Equal(t, "[file: wecom-"+fileID+"-0-report.pdf]", got[0].Content)
	data, err := os.ReadFile(got[0].Media[0])
	require.NoError(t, err)
	require.Equal(t, "%PDF-1.4 fake", string(data))
	require.Equal(t, filepath.Join(h.Workspace, "media"), filepath.Dir(got[0].Media[0]))

	require.Equal(t, "[file: x.txt: download failed]", got[1].Content)
	require.Empty(t, got[1].Media)
	require.Contains(t, h.Logs.String(), "aeskey")

	require.Equal(t, "[voice] transcribed text here", got[2].Content)

	require.Equal(t, "hello wecom\n[image: wecom-"+mixedID+"-1-photo.png]", got[3].Content)
	require.Len(t, got[3].Media, 1)
	require.Equal(t, "mixed", got[3].Metadata["msg_type"])
}

func TestDecryptRefusesAWrongKey(t *testing.T) {
	peer := wecompeer.New(t)
	res := peer.AddFile("a", []byte("hello"))
	other := peer.AddFile("b", []byte("hello"))
	// Without a MAC a garbage block passes the padding check now and then (about 1 in 256), so count.
	passed := 0
	for i := range 32 {
		garbage := make([]byte, 32)
		garbage[0], garbage[31] = byte(i), byte(i*7)
		if _, err := decrypt(garbage, res.AESKey); err == nil {
			passed++
		}
	}
	require.LessOrEqual(t, passed, 3, "garbage decrypts: %d of 32", passed)
	_, err := decrypt(make([]byte, 31), other.AESKey)
	require.ErrorContains(t, err, "whole number of blocks")
}

func TestFilesOutAreUploadedAndSent(t *testing.T) {
	h := startHarness(t, nil)
	req, _ := h.peer.Say(wecompeer.Message{From: alice, Text: "send me the chart"})
	msg := h.WaitPublished(1)[0]
	big := make([]byte, chunkSize+100) // two chunks
	for i := range big {
		big[i] = byte(i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "chart.png"), big, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "notes.txt"), []byte("notes"), 0o644))
	r := answer(alice, msg.Route.ReplyTo, "t1", "Here it is.")
	r.Media = []string{"chart.png", "notes.txt", "missing.pdf", "https://example.com/x.png"}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))

	ups := h.peer.Uploads()
	require.Len(t, ups, 2)
	require.Equal(t, "image", ups[0].Type)
	require.Equal(t, "chart.png", ups[0].Filename)
	require.Equal(t, big, ups[0].Data, "both chunks arrived in order")
	require.Equal(t, "file", ups[1].Type)
	require.Equal(t, "notes", string(ups[1].Data))

	var media []map[string]any
	for _, s := range h.peer.Sent() {
		if s.Cmd != "aibot_respond_msg" || s.ReqID != req {
			continue
		}
		var b map[string]any
		require.NoError(t, json.Unmarshal(s.Body, &b))
		if b["msgtype"] != "stream" {
			media = append(media, b)
		}
	}
	require.Len(t, media, 2, "both files answer the message")
	require.Equal(t, map[string]any{"msgtype": "image", "image": map[string]any{"media_id": ups[0].MediaID}}, media[0])
	require.Equal(t, map[string]any{"msgtype": "file", "file": map[string]any{"media_id": ups[1].MediaID}}, media[1])

	var texts []string
	for _, s := range h.peer.Replies(req) {
		texts = append(texts, s.Content)
	}
	require.Equal(t, []string{"[file upload failed: missing.pdf]", "https://example.com/x.png", "Here it is."}, texts)
}
