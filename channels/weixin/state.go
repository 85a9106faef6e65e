package weixin

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nanobot-durable/nanobot/atomicfile"
	"github.com/nanobot-durable/nanobot/config"
)

// account is nanobot's account.json: the login and where the poll stands,
// read by nanobot and this build alike.
type account struct {
	Token string `json:"token"`
	// GetUpdatesBuf is the long poll's cursor: a restart asks from here.
	GetUpdatesBuf string `json:"get_updates_buf"`
	// ContextTokens are the per-user tokens every reply must carry.
	ContextTokens map[string]string `json:"context_tokens"`
	BaseURL       string            `json:"base_url"`
	// BotID and UserID are who scanned (kept for the banner).
	BotID  string `json:"ilink_bot_id,omitempty"`
	UserID string `json:"ilink_user_id,omitempty"`
}

// Files in the state dir.
const (
	accountFile = "account.json"
	seenFile    = "handled-messages.json" // message ids already handed over
)

// stateDir is channels.weixin.stateDir, else <home>/weixin (nanobot's).
func stateDir(c Config, home string) string {
	if c.StateDir != "" {
		return config.ExpandHome(c.StateDir)
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, Name)
}

// homeOf is the nanobot home a config belongs to ("" for a config read from nowhere).
func homeOf(cfg *config.Config) string {
	if cfg == nil || cfg.Path == "" {
		return ""
	}
	return config.ConfigDir(cfg.Path)
}

// loadAccount reads account.json; a missing file is an empty account.
func loadAccount(dir string) (account, error) {
	var a account
	if dir == "" {
		return a, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, accountFile))
	if errors.Is(err, os.ErrNotExist) {
		return a, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &a)
	}
	if err != nil {
		return account{}, fmt.Errorf("weixin state %s: %w", filepath.Join(dir, accountFile), err)
	}
	return a, nil
}

// saveAccount writes account.json atomically, readable by the user only:
// it holds the bot token.
func saveAccount(dir string, a account) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("weixin state dir: %w", err)
	}
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, accountFile), data, 0o600); err != nil {
		return fmt.Errorf("weixin state: %w", err)
	}
	return nil
}

// storedLogin tells whether a QR login left a token behind.
func storedLogin(c Config, home string) bool {
	a, err := loadAccount(stateDir(c, home))
	return err == nil && a.Token != ""
}
