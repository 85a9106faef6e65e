package whatsapp

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/nanobot-durable/nanobot/channels"
)

// maxDownload bounds a file taken into the workspace (nanobot's 20 MB for media).
const maxDownload = 20 << 20

// maxUpload bounds a file sent: WhatsApp takes 100 MB of media; it is read whole to be encrypted.
const maxUpload = 100 << 20

// download saves a message's file into <workspace>/media; on failure it
// returns a note for the model instead of a path.
func (c *Channel) download(ctx context.Context, client waClient, id string, a *attachment) (path, note string) {
	mimeType := a.mimetype
	if mimeType == "" && a.kind == "voice" {
		mimeType = "audio/ogg" // a voice note is Opus in Ogg
	}
	name := channels.MediaName("whatsapp", id, a.filename, mimeType)
	fail := func(why string, err error) (string, string) {
		c.Log.Warn("whatsapp file not downloaded", "message_id", id, "kind", a.kind, "why", why, "error", err)
		return "", channels.FileLine(a.kind, why)
	}
	switch {
	case c.workspace == "":
		return fail("no workspace to save it in", nil)
	case a.size > maxDownload:
		return fail("too large", nil)
	}
	dctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
	defer cancel()
	data, err := client.Download(dctx, a.media)
	if err != nil {
		return fail("download failed", err)
	}
	p, err := channels.SaveMedia(c.workspace, name, bytes.NewReader(data), maxDownload)
	if err != nil {
		return fail("download failed", err)
	}
	return p, ""
}

// directAudio are the audio types WhatsApp plays inline; others (Ogg too:
// only mono Opus is accepted, which the type cannot prove) go as files, as in nanobot.
var directAudio = map[string]bool{"audio/aac": true, "audio/amr": true, "audio/mp4": true, "audio/mpeg": true}

// mediaMessage uploads a workspace file and builds the message that shows
// it: an image, a video, inline audio, or a document.
func (c *Channel) mediaMessage(ctx context.Context, client waClient, path string, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	_, data, err := channels.ReadMedia("", path, maxUpload)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(path)
	mt, _, _ := strings.Cut(channels.FileType(name, data), ";")
	kind := whatsmeow.MediaDocument
	switch {
	case strings.HasPrefix(mt, "image/") && mt != "image/svg+xml":
		kind = whatsmeow.MediaImage
	case strings.HasPrefix(mt, "video/"):
		kind = whatsmeow.MediaVideo
	case directAudio[mt]:
		kind = whatsmeow.MediaAudio
	}
	up, err := client.Upload(ctx, data, kind)
	if err != nil {
		return nil, fmt.Errorf("upload: %w", err)
	}
	size := uint64(len(data))
	switch kind {
	case whatsmeow.MediaImage:
		return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
			URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(size),
			Mimetype: proto.String(mt), ContextInfo: ci,
		}}, nil
	case whatsmeow.MediaVideo:
		return &waE2E.Message{VideoMessage: &waE2E.VideoMessage{
			URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(size),
			Mimetype: proto.String(mt), ContextInfo: ci,
		}}, nil
	case whatsmeow.MediaAudio:
		return &waE2E.Message{AudioMessage: &waE2E.AudioMessage{
			URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(size),
			Mimetype: proto.String(mt), ContextInfo: ci,
		}}, nil
	}
	return &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{
		URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
		FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(size),
		Mimetype: proto.String(mt), FileName: proto.String(name), Title: proto.String(name), ContextInfo: ci,
	}}, nil
}
