package session

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Claim is a recorded claim of a side-effecting step.
type Claim struct {
	Turn, EntryID string
	At            time.Time
}

// TurnBlob is one per-turn blob with when it was written.
type TurnBlob struct {
	Turn, Name string
	Data       []byte
	Written    time.Time
}

// Export reads what a session keeps beside its messages, its claims and
// turn blobs, for copying the files into another store (`nanobot db import`).
func (s *JSONLStore) Export(key string) ([]Claim, []TurnBlob, error) {
	dir := s.turnDir(key)
	var claims []Claim
	data, err := os.ReadFile(filepath.Join(dir, "claims.jsonl"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("read claims of session %s: %w", key, err)
	}
	for _, raw := range bytes.Split(data, []byte("\n")) {
		var c claimLine
		if json.Unmarshal(raw, &c) == nil && c.Turn != "" {
			claims = append(claims, Claim{Turn: c.Turn, EntryID: c.EntryID, At: parseTime(c.At)})
		}
	}
	turns, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return claims, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list turn data of session %s: %w", key, err)
	}
	var blobs []TurnBlob
	for _, t := range turns {
		turn, err := base64.RawURLEncoding.DecodeString(t.Name())
		if !t.IsDir() || err != nil {
			continue // the claims file, or not one of ours
		}
		files, err := os.ReadDir(filepath.Join(dir, t.Name()))
		if err != nil {
			return nil, nil, fmt.Errorf("list turn data of session %s: %w", key, err)
		}
		for _, f := range files {
			name, err := base64.RawURLEncoding.DecodeString(f.Name())
			info, ierr := f.Info()
			if err != nil || ierr != nil || f.IsDir() {
				continue // a temp file of a write in progress, or removed meanwhile
			}
			b, err := os.ReadFile(filepath.Join(dir, t.Name(), f.Name()))
			if err != nil {
				return nil, nil, fmt.Errorf("read turn data of session %s: %w", key, err)
			}
			blobs = append(blobs, TurnBlob{Turn: string(turn), Name: string(name), Data: b, Written: info.ModTime()})
		}
	}
	return claims, blobs, nil
}
