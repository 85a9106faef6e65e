package telegram

import (
	"cmp"
	"context"
	"fmt"
	"mime"
	"path"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/nanobot-durable/nanobot/channels"
)

// maxDownload is the Bot API's own limit on files a bot may download.
const maxDownload = 20 << 20

// attachment is the file a message carries, if any.
type attachment struct {
	kind     string // "image" or "file", as the model reads it
	fileID   string
	uniqueID string
	name     string
}

func attachmentOf(msg *models.Message) (attachment, bool) {
	switch {
	case len(msg.Photo) > 0:
		p := msg.Photo[len(msg.Photo)-1] // the largest size
		return attachment{"image", p.FileID, p.FileUniqueID, ""}, true
	case msg.Document != nil:
		d := msg.Document
		kind := "file"
		if strings.HasPrefix(d.MimeType, "image/") {
			kind = "image"
		}
		return attachment{kind, d.FileID, d.FileUniqueID, d.FileName}, true
	case msg.Video != nil:
		return attachment{"file", msg.Video.FileID, msg.Video.FileUniqueID, msg.Video.FileName}, true
	case msg.Audio != nil:
		return attachment{"file", msg.Audio.FileID, msg.Audio.FileUniqueID, msg.Audio.FileName}, true
	case msg.Voice != nil:
		return attachment{"file", msg.Voice.FileID, msg.Voice.FileUniqueID, "voice.ogg"}, true
	case msg.Animation != nil:
		return attachment{"file", msg.Animation.FileID, msg.Animation.FileUniqueID, msg.Animation.FileName}, true
	}
	return attachment{}, false
}

// take saves a message's file into <workspace>/media (channels.TakeFiles):
// its path, or the line the model reads instead.
func (c *Channel) take(chat int64) func(context.Context, attachment) (path, note string) {
	return func(ctx context.Context, att attachment) (string, string) {
		p, err := c.download(ctx, att)
		if err != nil {
			c.Log.Warn("telegram file not downloaded", "chat", chat, "kind", att.kind, "error", err)
			return "", channels.FileLine(att.kind, "download failed")
		}
		return p, ""
	}
}

func (c *Channel) download(ctx context.Context, att attachment) (string, error) {
	if c.workspace == "" {
		return "", fmt.Errorf("no workspace to save files in")
	}
	cctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
	defer cancel()
	f, err := c.bot.GetFile(cctx, &bot.GetFileParams{FileID: att.fileID})
	if err != nil {
		return "", fmt.Errorf("getFile: %w", err)
	}
	if att.uniqueID == "" {
		att.uniqueID = f.FileUniqueID
	}
	if f.FileSize > maxDownload {
		return "", fmt.Errorf("file of %d bytes is over the Bot API's %d-byte download limit", f.FileSize, maxDownload)
	}
	// Telegram's unique file id keeps names apart; a file without a name
	// of its own takes the type of the server's name (a photo's is JPEG).
	ext := path.Ext(f.FilePath)
	mt := mime.TypeByExtension(ext)
	if att.kind == "image" && ext == "" {
		mt = "image/jpeg"
	}
	name := channels.MediaName("telegram", cmp.Or(att.uniqueID, att.fileID), att.name, mt)
	if path.Ext(name) == "" && len(ext) <= 10 {
		name += channels.SafeID(ext) // a type this machine's MIME table does not know keeps the server's extension
	}
	p, err := channels.FetchMedia(cctx, c.http.client, c.bot.FileDownloadLink(f), c.workspace, name, maxDownload)
	if err != nil {
		return "", fmt.Errorf("download: %w", err)
	}
	return p, nil
}
