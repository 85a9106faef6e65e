package dingtalk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// downloadPath turns a message's downloadCode into a short-lived URL.
const downloadPath = "/v1.0/robot/messageFiles/download"

// maxDownload bounds a file taken into the workspace (nanobot's 20 MB).
const maxDownload = 20 << 20

// downloadAll saves a message's files into <workspace>/media and returns
// their paths, and a note for each one the model will not get.
func (c *Channel) downloadAll(ctx context.Context, m robotMessage, files []download) (paths, notes []string) {
	for i, f := range files {
		p, err := c.download(ctx, m, i, f)
		if err != nil {
			c.Log.Warn("dingtalk file not downloaded", "msg_id", m.MsgID, "file", f.name, "error", err)
			notes = append(notes, channels.FileNote(f.name, "download failed"))
			continue
		}
		paths = append(paths, p)
	}
	return paths, notes
}

// download asks for the file's URL with the access token, then fetches it.
func (c *Channel) download(ctx context.Context, m robotMessage, i int, f download) (string, error) {
	if c.workspace == "" {
		return "", errors.New("no workspace to save files in")
	}
	dctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
	defer cancel()
	var out struct {
		DownloadURL string `json:"downloadUrl"`
	}
	err := c.rest.Call(dctx, http.MethodPost, downloadPath, map[string]string{"downloadCode": f.code, "robotCode": c.cfg.ClientID}, &out)
	if err != nil {
		return "", err
	}
	if !channels.FetchableURL(out.DownloadURL, strings.TrimSpace(c.cfg.APIBase), nil) {
		return "", fmt.Errorf("download url %q is not https", channels.RedactURL(out.DownloadURL))
	}
	return channels.FetchMedia(dctx, c.http, out.DownloadURL, c.workspace, channels.MediaName("dingtalk", m.MsgID+"-"+strconv.Itoa(i), f.name, ""), maxDownload)
}
