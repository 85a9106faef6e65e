package wecom

import (
	"bytes"
	"cmp"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// maxMedia is nanobot's WECOM_UPLOAD_MAX_BYTES, both ways.
const maxMedia = 200 << 20

// download fetches a message's file, decrypts it with its aeskey and saves
// it in <workspace>/media; it returns the saved path.
func (c *Channel) download(ctx context.Context, msgID string, index int, p piece) (string, error) {
	if c.workspace == "" {
		return "", errors.New("no workspace to save files in")
	}
	if p.res.URL == "" || p.res.AESKey == "" {
		return "", errors.New("no url or aeskey")
	}
	// Any https host (WeCom's COS buckets vary), or the socket's own host
	// over plain http: a test server.
	if !channels.FetchableURL(p.res.URL, strings.Replace(c.cfg.WSURL, "ws", "http", 1), nil) {
		return "", fmt.Errorf("url %q is not https", channels.RedactURL(p.res.URL))
	}
	resp, err := channels.GetFile(ctx, c.http, p.res.URL, "")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	sealed, err := channels.ReadLimited(resp.Body, maxMedia+aes.BlockSize*2) // the padding comes off
	if err != nil {
		return "", fmt.Errorf("read %s: %w", channels.RedactURL(p.res.URL), err)
	}
	plain, err := decrypt(sealed, p.res.AESKey)
	if err != nil {
		return "", err
	}
	// The message id and the item's place keep names apart; a file without a name is named by its kind.
	name := cmp.Or(p.res.Name, channels.DispositionName(resp.Header), p.kind)
	return channels.SaveMedia(c.workspace, channels.MediaName("wecom", msgID+"-"+strconv.Itoa(index), name, ""), bytes.NewReader(plain), maxMedia)
}

// decrypt opens a file WeCom sent: AES-256-CBC under the base64 aeskey,
// the key's first 16 bytes as IV, PKCS#7 padding to 32-byte blocks.
func decrypt(sealed []byte, aesKey string) ([]byte, error) {
	key, err := decodeKey(aesKey)
	if err != nil {
		return nil, err
	}
	if len(sealed) == 0 || len(sealed)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("decrypt: %d bytes is not a whole number of blocks", len(sealed))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("decrypt: %w", err)
	}
	out := make([]byte, len(sealed))
	cipher.NewCBCDecrypter(block, key[:aes.BlockSize]).CryptBlocks(out, sealed)
	pad := int(out[len(out)-1])
	if pad < 1 || pad > 32 || pad > len(out) {
		return nil, errors.New("decrypt: bad padding (wrong aeskey?)")
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, errors.New("decrypt: bad padding (wrong aeskey?)")
		}
	}
	return out[:len(out)-pad], nil
}

// decodeKey reads a base64 aeskey, with or without its padding.
func decodeKey(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	key, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("aeskey: %w", err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("aeskey: %d bytes, not 32", len(key))
	}
	return key, nil
}
