package qq

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Rich-media file types (QQ Bot API, "富媒体消息"): nanobot sends images or files only.
const (
	fileTypeImage = 1
	fileTypeFile  = 4
)

// maxUpload bounds a file sent base64 in one rich-media upload.
const maxUpload = 20 << 20

// cdnSuffixes are the hosts QQ serves attachments from; nothing else is fetched.
var cdnSuffixes = []string{".qq.com", ".qpic.cn", ".gtimg.cn"}

// download saves one attachment into <workspace>/media.
func (c *Channel) download(ctx context.Context, msgID string, i int, a attachment) (string, error) {
	if c.workspace == "" {
		return "", errors.New("no workspace to save files in")
	}
	raw := a.URL
	if strings.HasPrefix(raw, "//") { // QQ sends protocol-relative urls
		raw = "https:" + raw
	}
	if !channels.FetchableURL(raw, c.cfg.APIBase, qqHost) {
		return "", fmt.Errorf("url %q is not QQ's CDN", channels.RedactURL(raw))
	}
	dctx, cancel := context.WithTimeout(ctx, 4*callTimeout)
	defer cancel()
	resp, err := channels.GetFile(dctx, c.http, raw, "") // no token: CDN urls are signed
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	name := channels.MediaName("qq", msgID+"-"+strconv.Itoa(i), a.Filename, cmp.Or(a.ContentType, resp.Header.Get("Content-Type")))
	return channels.SaveMedia(c.workspace, name, resp.Body, c.cfg.DownloadMaxBytes)
}

// qqHost tells QQ's CDN hosts.
func qqHost(host string) bool {
	return slices.ContainsFunc(cdnSuffixes, func(s string) bool { return strings.HasSuffix(host, s) })
}

// sendMedia uploads a file (a workspace path, or a URL QQ fetches itself)
// and posts it as a rich-media message. A file that cannot be sent becomes
// nanobot's "[Attachment send failed: name]" line instead.
func (c *Channel) sendMedia(ctx context.Context, route protocol.Route, key, ref string) (string, error) {
	name := baseName(ref)
	upload := map[string]any{"file_type": fileTypeOf(name), "srv_send_msg": false}
	if channels.IsLink(ref) {
		upload["url"] = ref
	} else {
		_, data, err := channels.ReadMedia(c.workspace, strings.TrimPrefix(ref, "file://"), maxUpload)
		if err != nil {
			c.Log.Warn("qq attachment not sent", "file", ref, "error", err)
			return c.postText(ctx, route, key, "[Attachment send failed: "+name+"]")
		}
		upload["file_data"] = base64.StdEncoding.EncodeToString(data)
	}
	if upload["file_type"] != fileTypeImage {
		upload["file_name"] = name // an image with a name shows as a file
	}
	var file struct {
		FileInfo string `json:"file_info"`
	}
	err := c.api.Call(ctx, http.MethodPost, chatPath(c.isGroup(route.ChatID), route.ChatID)+"/files", upload, &file)
	if err == nil && file.FileInfo == "" {
		err = errors.New("qq upload: no file_info")
	}
	if err != nil {
		var se *channels.SendError
		if errors.As(sendError(err), &se) && se.Permanent {
			c.Log.Warn("qq attachment refused", "file", ref, "error", err)
			return c.postText(ctx, route, key, "[Attachment send failed: "+name+"]")
		}
		return "", sendError(err)
	}
	return c.post(ctx, route, key, map[string]any{"msg_type": msgTypeMedia, "media": map[string]string{"file_info": file.FileInfo}})
}

var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".bmp": true,
	".webp": true, ".tif": true, ".tiff": true, ".ico": true, ".svg": true}

func isImage(name string) bool { return imageExts[strings.ToLower(filepath.Ext(name))] }

// fileTypeOf is nanobot's conservative choice: images as images, the rest as files.
func fileTypeOf(name string) int {
	if isImage(name) || strings.HasPrefix(mime.TypeByExtension(filepath.Ext(name)), "image/") {
		return fileTypeImage
	}
	return fileTypeFile
}

// baseName is a path's or URL's last element.
func baseName(ref string) string {
	if u, err := url.Parse(ref); err == nil && u.Scheme != "" {
		ref = u.Path
	}
	return cmp.Or(filepath.Base(ref), "file")
}
