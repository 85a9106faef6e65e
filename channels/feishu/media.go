package feishu

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// maxDownload bounds a file taken into the workspace.
const maxDownload = 20 << 20

// maxUpload is Feishu's limit on an uploaded file (images: 10 MB).
const (
	maxUpload      = 30 << 20
	maxImageUpload = 10 << 20
)

// errLocalFile marks a file that cannot be sent however often it is tried.
var errLocalFile = errors.New("file cannot be sent")

// Extensions sent as images, audio (opus) and video; the rest are files.
var (
	imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".bmp": true, ".webp": true, ".ico": true, ".tiff": true, ".tif": true}
	audioExts = map[string]bool{".opus": true}
	videoExts = map[string]bool{".mp4": true, ".mov": true, ".avi": true}
	fileTypes = map[string]string{".opus": "opus", ".mp4": "mp4", ".pdf": "pdf", ".doc": "doc", ".docx": "doc",
		".xls": "xls", ".xlsx": "xls", ".ppt": "ppt", ".pptx": "ppt"}
)

// download saves a message's resource into <workspace>/media: GET
// /open-apis/im/v1/messages/{id}/resources/{key}?type=image|file. It
// returns the path ("" on failure) and the note the model reads.
func (c *Channel) download(ctx context.Context, messageID string, r resource) (string, string) {
	typ := "file" // audio and video download as files
	if r.Kind == "image" {
		typ = "image"
	}
	path, err := c.fetchResource(ctx, messageID, r, typ)
	if err != nil {
		c.Log.Warn("feishu resource not downloaded", "message_id", messageID, "key", r.Key, "kind", r.Kind, "error", err)
		return "", channels.FileLine(r.Kind, "download failed")
	}
	return path, channels.FileLine(r.Kind, path)
}

func (c *Channel) fetchResource(ctx context.Context, messageID string, r resource, typ string) (string, error) {
	if c.workspace == "" {
		return "", errors.New("no workspace to save files in")
	}
	dctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
	defer cancel()
	resp, err := c.api.rest.Do(dctx, http.MethodGet,
		"/open-apis/im/v1/messages/"+url.PathEscape(messageID)+"/resources/"+url.PathEscape(r.Key)+"?type="+typ, nil, "")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var env envelope
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&env)
		return "", fmt.Errorf("feishu download resource: code %d: %s", env.Code, env.Msg)
	}
	name := cmp.Or(channels.DispositionName(resp.Header), r.Name)
	if name == "" && typ == "image" {
		name = "image.jpg"
	}
	if r.Kind == "audio" && !strings.HasSuffix(name, ".opus") && !strings.HasSuffix(name, ".ogg") {
		name += ".ogg" // Feishu's voice is opus in ogg
	}
	return channels.SaveMedia(c.workspace, channels.MediaName("feishu", r.Key, name, ""), resp.Body, maxDownload)
}

// upload sends a workspace file to Feishu and returns the message type and
// content that show it: an image (POST /open-apis/im/v1/images) or a file,
// audio or video (POST /open-apis/im/v1/files).
func (c *Channel) upload(ctx context.Context, path string) (msgType, content string, err error) {
	ext := strings.ToLower(filepath.Ext(path))
	name := filepath.Base(path)
	limit := int64(maxUpload)
	if imageExts[ext] {
		limit = maxImageUpload
	}
	_, data, err := channels.ReadMedia("", path, limit)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", errLocalFile, err)
	}
	if imageExts[ext] {
		var got struct {
			ImageKey string `json:"image_key"`
		}
		err := c.multipart(ctx, "upload image", "/open-apis/im/v1/images", map[string]string{"image_type": "message"}, "image", data, name, &got)
		if err != nil {
			return "", "", err
		}
		return "image", jsonString(map[string]string{"image_key": got.ImageKey}), nil
	}
	ftype := fileTypes[ext]
	if ftype == "" {
		ftype = "stream"
	}
	var got struct {
		FileKey string `json:"file_key"`
	}
	if err := c.multipart(ctx, "upload file", "/open-apis/im/v1/files", map[string]string{"file_type": ftype, "file_name": name}, "file", data, name, &got); err != nil {
		return "", "", err
	}
	msgType = "file"
	switch {
	case audioExts[ext]:
		msgType = "audio"
	case videoExts[ext]:
		msgType = "media"
	}
	return msgType, jsonString(map[string]string{"file_key": got.FileKey}), nil
}

// multipart posts fields and one file as multipart/form-data.
func (c *Channel) multipart(ctx context.Context, op, path string, fields map[string]string, field string, data []byte, name string, out any) error {
	body, contentType, err := channels.Form(fields, channels.FormFile{Field: field, Name: name, Type: "application/octet-stream", Data: data})
	if err != nil {
		return fmt.Errorf("feishu %s: %w", op, err)
	}
	return c.api.call(ctx, request{op: op, method: http.MethodPost, path: path, body: body, contentType: contentType}, out)
}
