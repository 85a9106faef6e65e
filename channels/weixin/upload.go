package weixin

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// Upload media types (getuploadurl's media_type).
const (
	uploadImage = 1
	uploadVideo = 2
	uploadFile  = 3
	uploadVoice = 4
)

const epGetUploadURL = "ilink/bot/getuploadurl"

// maxUpload caps one outbound file.
const maxUpload = 50 << 20

// uploadKind is the upload type, item type and item key nanobot picks by extension.
func uploadKind(name string) (upload, item int, key string) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tiff", ".ico", ".svg":
		return uploadImage, itemImage, "image_item"
	case ".mp4", ".avi", ".mov", ".mkv", ".webm", ".flv":
		return uploadVideo, itemVideo, "video_item"
	case ".mp3", ".wav", ".amr", ".silk", ".ogg", ".m4a", ".aac", ".flac":
		return uploadVoice, itemVoice, "voice_item"
	}
	return uploadFile, itemFile, "file_item"
}

// uploadItem puts a workspace file on the CDN as nanobot does — a fresh
// AES key, getuploadurl, the encrypted bytes POSTed, x-encrypted-param
// back — and returns the message item that shows it.
func (c *Channel) uploadItem(ctx context.Context, to, path, fileKey string) (map[string]any, error) {
	path, data, err := channels.ReadMedia(c.workspace, path, maxUpload)
	if err != nil {
		return nil, fmt.Errorf("weixin upload: %w", err)
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	sum := md5.Sum(data)
	padded := (len(data)/aes.BlockSize + 1) * aes.BlockSize
	upload, itemType, itemKey := uploadKind(path)
	var up struct {
		UploadFullURL string `json:"upload_full_url"`
		UploadParam   string `json:"upload_param"`
	}
	api := c.client()
	err = api.post(ctx, epGetUploadURL, map[string]any{
		"filekey": fileKey, "media_type": upload, "to_user_id": to, "rawsize": len(data),
		"rawfilemd5": hex.EncodeToString(sum[:]), "filesize": padded, "no_need_thumb": true,
		"aeskey": hex.EncodeToString(key),
	}, &up)
	if err != nil {
		return nil, err
	}
	target := strings.TrimSpace(up.UploadFullURL)
	if target == "" && up.UploadParam == "" {
		return nil, fmt.Errorf("weixin getuploadurl returned no upload URL")
	}
	if target == "" {
		target = strings.TrimRight(c.cfg.CDNBaseURL, "/") + "/upload?encrypted_query_param=" +
			url.QueryEscape(up.UploadParam) + "&filekey=" + url.QueryEscape(fileKey)
	}
	param, err := c.postCDN(ctx, target, encryptECB(data, key))
	if err != nil {
		return nil, err
	}
	media := map[string]any{"media": map[string]any{
		// The CDN's aes_key is base64 of the key's hex, as the reference plugin sends it.
		"encrypt_query_param": param, "aes_key": base64.StdEncoding.EncodeToString([]byte(hex.EncodeToString(key))), "encrypt_type": 1,
	}}
	switch itemType {
	case itemImage:
		media["mid_size"] = padded
	case itemVideo:
		media["video_size"] = padded
	case itemFile:
		media["file_name"], media["len"] = filepath.Base(path), strconv.Itoa(len(data))
	}
	return map[string]any{"type": itemType, itemKey: media}, nil
}

// postCDN uploads the encrypted bytes; the download param is in x-encrypted-param.
func (c *Channel) postCDN(ctx context.Context, target string, body []byte) (string, error) {
	cdn := channels.API{Name: "weixin cdn", HTTP: c.http, Judge: func(e *channels.HTTPError) error { return e }}
	resp, err := cdn.Do(ctx, http.MethodPost, target, body, "application/octet-stream")
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	param := resp.Header.Get("x-encrypted-param")
	if param == "" {
		return "", fmt.Errorf("weixin cdn upload: no x-encrypted-param in the answer")
	}
	return param, nil
}

// encryptECB is AES-128-ECB with PKCS#7 padding, as the CDN expects.
func encryptECB(data, key []byte) []byte {
	block, _ := aes.NewCipher(key) // 16 bytes: never fails
	pad := aes.BlockSize - len(data)%aes.BlockSize
	in := append(append(make([]byte, 0, len(data)+pad), data...), bytes.Repeat([]byte{byte(pad)}, pad)...)
	out := make([]byte, len(in))
	for i := 0; i < len(in); i += aes.BlockSize {
		block.Encrypt(out[i:i+aes.BlockSize], in[i:i+aes.BlockSize])
	}
	return out
}
