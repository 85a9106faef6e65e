package dingtalk

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// uploadPath takes a file for the robot to send (the older API: the token in the query).
const uploadPath = "/media/upload"

// maxUpload is the largest file DingTalk takes (its 20 MB).
const maxUpload = 20 << 20

// Upload types by extension, as nanobot guesses them.
var (
	imageExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".gif": true, ".bmp": true, ".webp": true}
	audioExts = map[string]bool{".amr": true, ".mp3": true, ".wav": true, ".ogg": true, ".m4a": true, ".aac": true}
	videoExts = map[string]bool{".mp4": true, ".mov": true, ".avi": true, ".mkv": true, ".webm": true}
)

func uploadType(name string) string {
	ext := strings.ToLower(filepath.Ext(name))
	switch {
	case imageExts[ext]:
		return "image"
	case audioExts[ext]:
		return "voice"
	case videoExts[ext]:
		return "video"
	}
	return "file"
}

// sendMedia shows one file: an image URL as a picture DingTalk fetches
// itself, another URL as a link, a workspace file uploaded then sent as a
// picture or a file; a file that cannot go becomes nanobot's line saying
// so (channels.SendFile).
func (c *Channel) sendMedia(ctx context.Context, chatID, ref string) (string, error) {
	upload := func(p string) (string, error) {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", &channels.SendError{Err: fmt.Errorf("read %s: %w", filepath.Base(p), err), Permanent: true}
		}
		data, name := zipHTML(filepath.Base(p), data)
		kind := uploadType(name)
		mediaID, err := c.upload(ctx, kind, name, data)
		if err != nil {
			return "", err
		}
		if kind == "image" {
			return c.sendRobot(ctx, chatID, "sampleImageMsg", map[string]string{"photoURL": mediaID})
		}
		fileType := strings.TrimPrefix(strings.ToLower(filepath.Ext(name)), ".")
		if fileType == "" {
			fileType = "bin"
		}
		return c.sendRobot(ctx, chatID, "sampleFile", map[string]string{"mediaId": mediaID, "fileName": name, "fileType": fileType})
	}
	text := func(s string) (string, error) {
		u, err := url.Parse(s)
		switch {
		case !channels.IsLink(s): // the line saying a file did not go
		case err == nil && uploadType(u.Path) == "image":
			return c.sendRobot(ctx, chatID, "sampleImageMsg", map[string]string{"photoURL": s})
		case err == nil:
			s = "[" + path.Base(u.Path) + "](" + s + ")"
		default:
			s = "[" + s + "](" + s + ")"
		}
		return c.sendRobot(ctx, chatID, "sampleMarkdown", map[string]string{"title": replyTitle, "text": s})
	}
	return channels.SendFileSaying(c.Log, c.workspace, ref, maxUpload, upload, text, func(name string) string {
		return "[Attachment send failed: " + name + "]"
	})
}

// zipHTML wraps an HTML file in a zip: DingTalk refuses raw HTML, as nanobot found.
func zipHTML(name string, data []byte) ([]byte, string) {
	ext := strings.ToLower(filepath.Ext(name))
	if ext != ".html" && ext != ".htm" {
		return data, name
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(name)
	if err == nil {
		_, err = w.Write(data)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return data, name
	}
	return buf.Bytes(), strings.TrimSuffix(name, filepath.Ext(name)) + ".zip"
}

// upload posts a file to media/upload and returns its media_id.
func (c *Channel) upload(ctx context.Context, kind, name string, data []byte) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
	defer cancel()
	body, contentType, err := channels.Form(nil, channels.FormFile{Field: "media", Name: name, Data: data})
	if err != nil {
		return "", err
	}
	var out struct {
		MediaID string `json:"media_id"`
	}
	if err := c.legacy.Send(cctx, http.MethodPost, uploadPath+"?type="+url.QueryEscape(kind), body, contentType, &out); err != nil {
		return "", err
	}
	if out.MediaID == "" {
		return "", fmt.Errorf("dingtalk media upload: no media_id in the answer")
	}
	return out.MediaID, nil
}
