package weixin

import (
	"bytes"
	"cmp"
	"context"
	"crypto/aes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// maxDownload caps one inbound file.
const maxDownload = 50 << 20

// mediaRef is one medium of a message to fetch from the CDN.
type mediaRef struct {
	kind string // image, voice, file, video
	item *mediaItem
}

// downloadable are the media of a message that can be fetched: they have
// a locator, and (but for images) a key, as nanobot requires.
func downloadable(m message) []mediaRef {
	if out := mediaOf(m.ItemList); len(out) > 0 {
		return out
	}
	// No medium of its own: the one a text quotes, as nanobot falls back to.
	for _, it := range m.ItemList {
		if it.Type == itemText && it.RefMsg != nil && it.RefMsg.MessageItem != nil {
			if out := mediaOf([]messageItem{*it.RefMsg.MessageItem}); len(out) > 0 {
				return out
			}
		}
	}
	return nil
}

// mediaOf are the fetchable media among items.
func mediaOf(items []messageItem) []mediaRef {
	var out []mediaRef
	for _, it := range items {
		var ref mediaRef
		switch it.Type {
		case itemImage:
			ref = mediaRef{"image", it.ImageItem}
		case itemVoice:
			if it.VoiceItem != nil && it.VoiceItem.Text != "" {
				continue // WeChat transcribed it
			}
			ref = mediaRef{"voice", it.VoiceItem}
		case itemFile:
			ref = mediaRef{"file", it.FileItem}
		case itemVideo:
			ref = mediaRef{"video", it.VideoItem}
		default:
			continue
		}
		if ref.item == nil || ref.item.Media == nil || (ref.item.Media.EncryptQueryParam == "" && ref.item.Media.FullURL == "") {
			continue
		}
		if ref.kind != "image" && ref.item.AESKey == "" && ref.item.Media.AESKey == "" {
			continue
		}
		out = append(out, ref)
	}
	return out
}

// download fetches a medium (full_url, else the CDN's encrypted_query_param
// URL), decrypts it (AES-128-ECB) and saves it in the workspace as the
// index-th file of message msgID.
func (c *Channel) download(ctx context.Context, ref mediaRef, msgID string, index int) (string, error) {
	key, err := mediaKey(ref.item)
	if err != nil {
		return "", err
	}
	var urls []string
	if u := strings.TrimSpace(ref.item.Media.FullURL); u != "" {
		urls = append(urls, u)
	}
	if q := ref.item.Media.EncryptQueryParam; q != "" {
		urls = append(urls, strings.TrimRight(c.cfg.CDNBaseURL, "/")+"/download?encrypted_query_param="+url.QueryEscape(q))
	}
	var data []byte
	for i, u := range urls {
		data, err = c.fetch(ctx, u)
		if err == nil || i == len(urls)-1 {
			break
		}
		c.Log.Warn("weixin media download via full_url failed; trying the CDN", "message_id", msgID, "error", err)
	}
	if err != nil {
		return "", err
	}
	if key != nil {
		if data, err = decryptECB(data, key); err != nil {
			return "", err
		}
	}
	name := channels.MediaName(Name, msgID+"-"+strconv.Itoa(index), cmp.Or(ref.item.FileName, ref.kind+extFor(ref.kind)), "")
	return channels.SaveMedia(c.workspace, name, bytes.NewReader(data), maxDownload)
}

func (c *Channel) fetch(ctx context.Context, u string) ([]byte, error) {
	resp, err := channels.GetFile(ctx, c.http, u, "")
	if err != nil {
		return nil, fmt.Errorf("weixin cdn: %w", err)
	}
	defer resp.Body.Close()
	return channels.ReadLimited(resp.Body, maxDownload)
}

// mediaKey is the AES key: an image's aeskey (hex), else media.aes_key
// (base64 of 16 bytes, or of their 32 hex characters); nil for none.
func mediaKey(it *mediaItem) ([]byte, error) {
	if it.AESKey != "" {
		k, err := hex.DecodeString(it.AESKey)
		if err != nil || len(k) != 16 {
			return nil, fmt.Errorf("weixin media aeskey is not 32 hex characters")
		}
		return k, nil
	}
	if it.Media == nil || it.Media.AESKey == "" {
		return nil, nil
	}
	return parseAESKey(it.Media.AESKey)
}

var hexKey = regexp.MustCompile(`^[0-9a-fA-F]{32}$`)

func parseAESKey(b64 string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("weixin media aes_key is not base64: %w", err)
	}
	switch {
	case len(raw) == 16:
		return raw, nil
	case hexKey.Match(raw):
		return hex.DecodeString(string(raw))
	}
	return nil, fmt.Errorf("weixin media aes_key decodes to %d bytes, not 16 or 32 hex characters", len(raw))
}

// decryptECB is AES-128-ECB with PKCS#7 padding removed when it is valid.
func decryptECB(data, key []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if len(data)%aes.BlockSize != 0 {
		return nil, errors.New("weixin media: ciphertext is not a whole number of blocks")
	}
	out := make([]byte, len(data))
	for i := 0; i < len(data); i += aes.BlockSize {
		block.Decrypt(out[i:i+aes.BlockSize], data[i:i+aes.BlockSize])
	}
	if n := len(out); n > 0 {
		pad := int(out[n-1])
		if pad >= 1 && pad <= aes.BlockSize && bytes.Equal(out[n-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
			out = out[:n-pad]
		}
	}
	return out, nil
}

func extFor(kind string) string {
	switch kind {
	case "image":
		return ".jpg"
	case "voice":
		return ".silk"
	case "video":
		return ".mp4"
	}
	return ""
}
