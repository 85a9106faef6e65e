package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// maxDownload bounds a file taken from Slack into the workspace.
const maxDownload = 20 << 20

// download saves a file shared with a message into <workspace>/media
// and returns its path and the marker the model reads ("[image: x.png]");
// a file it cannot fetch becomes a marker saying why, as in nanobot.
func (c *Channel) download(ctx context.Context, f file) (string, string) {
	name := f.Name
	if name == "" {
		name = f.Title
	}
	if name == "" {
		name = f.ID
	}
	if name == "" {
		name = "slack-file"
	}
	kind := "file"
	if strings.HasPrefix(f.Mimetype, "image/") {
		kind = "image"
	}
	url := f.URLPrivateDownload
	if url == "" {
		url = f.URLPrivate
	}
	fail := func(reason string) (string, string) {
		return "", fmt.Sprintf("[%s: %s: %s; not available to nanobot. Check the Slack app's files:read scope.]", kind, name, reason)
	}
	if url == "" || c.workspace == "" {
		return fail("no download url")
	}
	if f.Size > maxDownload {
		return fail("larger than 20 MB")
	}
	if !channels.FetchableURL(url, c.cfg.APIBase, slackHost) {
		// The download carries the bot token: it goes to Slack only.
		c.Log.Warn("slack file url is not Slack's; not downloaded", "file", f.ID, "url", channels.RedactURL(url))
		return fail("not a Slack file url")
	}
	path, err := c.fetch(ctx, url, channels.MediaName("slack", f.ID, cmp.Or(f.Name, f.Title), f.Mimetype))
	if err != nil {
		c.Log.Warn("slack file not downloaded", "file", f.ID, "error", err)
		return fail("download failed")
	}
	return path, fmt.Sprintf("[%s: %s]", kind, name)
}

// slackHost tells Slack's hosts (slack.com and its subdomains), where a
// file's download may carry the bot token.
func slackHost(host string) bool { return host == "slack.com" || strings.HasSuffix(host, ".slack.com") }

func (c *Channel) fetch(ctx context.Context, url, name string) (string, error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := channels.GetFile(dctx, http.DefaultClient, url, "Bearer "+c.cfg.BotToken)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "text/html") {
		return "", errors.New("got a web page instead of the file (missing files:read scope?)")
	}
	return channels.SaveMedia(c.workspace, name, resp.Body, maxDownload)
}
