package feishu

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// An app with an Encrypt Key set gets its events as {"encrypt": "…"}:
// base64 of a 16-byte IV and the AES-256-CBC ciphertext (PKCS#7 padded)
// of the event, under the SHA-256 of the key.

// decryptEvent returns the event payload, decrypted if it came encrypted.
func decryptEvent(payload []byte, key string) ([]byte, error) {
	var wrapped struct {
		Encrypt string `json:"encrypt"`
	}
	if json.Unmarshal(payload, &wrapped) != nil || wrapped.Encrypt == "" {
		return payload, nil
	}
	if key == "" {
		return nil, errors.New("the event is encrypted and channels.feishu.encryptKey is not set")
	}
	raw, err := base64.StdEncoding.DecodeString(wrapped.Encrypt)
	if err != nil {
		return nil, fmt.Errorf("encrypted event: %w", err)
	}
	if len(raw) < 2*aes.BlockSize || len(raw)%aes.BlockSize != 0 {
		return nil, errors.New("encrypted event: not whole AES blocks")
	}
	sum := sha256.Sum256([]byte(key))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		return nil, fmt.Errorf("encrypted event: %w", err)
	}
	out := make([]byte, len(raw)-aes.BlockSize)
	cipher.NewCBCDecrypter(block, raw[:aes.BlockSize]).CryptBlocks(out, raw[aes.BlockSize:])
	pad := int(out[len(out)-1])
	if pad == 0 || pad > aes.BlockSize || pad > len(out) {
		return nil, errors.New("encrypted event: bad padding (wrong channels.feishu.encryptKey?)")
	}
	out = out[:len(out)-pad]
	if !json.Valid(out) {
		return nil, errors.New("encrypted event: not JSON once decrypted (wrong channels.feishu.encryptKey?)")
	}
	return out, nil
}
