package discord

import (
	"context"
	"errors"
	"fmt"

	"github.com/nanobot-durable/nanobot/channels"
)

// maxDownload bounds an attachment taken into the workspace (nanobot's 20 MB).
const maxDownload = 20 << 20

// cdnHosts serve Discord's attachments; nothing else is fetched.
var cdnHosts = map[string]bool{"cdn.discordapp.com": true, "media.discordapp.net": true}

// take saves one of message messageID's attachments into <workspace>/media
// and returns its path, or the note the model reads instead.
func (c *Channel) take(ctx context.Context, messageID string, a attachment) (path, note string) {
	name := a.Filename
	if name == "" {
		name = "attachment"
	}
	if a.Size > maxDownload {
		return "", channels.FileNote(name, "too large")
	}
	p, err := c.download(ctx, a)
	if err != nil {
		c.Log.Warn("discord attachment not downloaded", "message_id", messageID, "attachment", a.ID, "error", err)
		return "", channels.FileNote(name, "download failed")
	}
	return p, ""
}

func (c *Channel) download(ctx context.Context, a attachment) (string, error) {
	if c.workspace == "" {
		return "", errors.New("no workspace to save files in")
	}
	if !channels.FetchableURL(a.URL, c.cfg.APIBase, func(host string) bool { return cdnHosts[host] }) {
		return "", fmt.Errorf("url %q is not Discord's CDN", channels.RedactURL(a.URL))
	}
	dctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
	defer cancel()
	return channels.FetchMedia(dctx, c.http, a.URL, c.workspace, channels.MediaName("discord", a.ID, a.Filename, a.ContentType), maxDownload) // CDN urls are signed
}
