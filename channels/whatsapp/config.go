package whatsapp

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Config is nanobot's channels.whatsapp block (its neonize channel), key
// for key, plus phoneNumber, ours, for pairing by code instead of a QR.
type Config struct {
	Enabled bool `json:"enabled"`
	// AllowFrom are phone numbers ("+1 555 123 4567", "15551234567",
	// "15551234567@s.whatsapp.net") or "*"; compared as bare digits.
	AllowFrom []string `json:"allowFrom"`
	// GroupPolicy is "open" (every group message) or "mention" (the bot
	// mentioned, or a reply to one of its messages); DMs always pass.
	GroupPolicy string `json:"groupPolicy"`
	// DatabasePath is the device store (SQLite); "" is
	// <home>/whatsapp-auth/whatsmeow.db.
	DatabasePath string `json:"databasePath"`
	// LIDMappings map a LID (the number WhatsApp hides a phone behind) to
	// the phone number allowFrom names.
	LIDMappings map[string]string `json:"lidMappings"`
	// PhoneNumber (ours): `nanobot channels login whatsapp` shows a pairing
	// code for this number instead of a QR code.
	PhoneNumber string `json:"phoneNumber"`
	// BridgeURL and BridgeToken belong to nanobot's old Node bridge: read so
	// an old config still loads, then ignored with a warning.
	BridgeURL   string `json:"bridgeUrl"`
	BridgeToken string `json:"bridgeToken"`
}

// defaults are nanobot's WhatsAppConfig defaults.
func defaults() Config { return Config{GroupPolicy: channels.PolicyOpen} }

// block reads channels.whatsapp; a broken block is reported by Check at start.
func block(cfg *config.Config) Config {
	c, _ := channels.Block(cfg, Name, defaults)
	return c
}

// readConfig is channels.whatsapp over nanobot's defaults, validated.
func readConfig(cfg *config.Config) (Config, error) { return channels.ValidBlock(cfg, Name, defaults) }

// check is the Spec's Check: the block reads, its values make sense, and
// the old bridge's keys are named as ignored.
func check(cfg *config.Config) ([]config.Warning, error) {
	warnings, err := channels.CheckValidBlock(Name, defaults)(cfg)
	if err != nil {
		return warnings, err
	}
	c := block(cfg)
	source := "config"
	if cfg != nil && cfg.Path != "" {
		source = "config " + cfg.Path
	}
	for _, key := range c.bridgeKeys() {
		warnings = append(warnings, config.Warning{Source: source, Key: "channels.whatsapp." + key, Msg: bridgeWarning})
	}
	return warnings, nil
}

// bridgeWarning tells what became of the Node bridge's keys.
const bridgeWarning = "a key of nanobot's old Node bridge, ignored: this build talks to WhatsApp itself; pair it with `nanobot channels login whatsapp`"

// bridgeKeys are the old bridge's keys the block sets.
func (c Config) bridgeKeys() []string {
	var keys []string
	if c.BridgeURL != "" {
		keys = append(keys, "bridgeUrl")
	}
	if c.BridgeToken != "" {
		keys = append(keys, "bridgeToken")
	}
	return keys
}

// Validate implements channels.Validator: the values make sense.
func (c Config) Validate(where string) error {
	if err := channels.CheckOneOf(Name, "groupPolicy", c.GroupPolicy, where, channels.PolicyOpen, channels.PolicyMention); err != nil {
		return err
	}
	if p := strings.TrimSpace(c.PhoneNumber); p != "" && len(phoneDigits(p)) < 7 {
		return fmt.Errorf("channels.whatsapp.phoneNumber %q is not an international phone number%s", p, where)
	}
	return nil
}

// storePath is where the device session is kept.
func (c Config) storePath(home string) string {
	if p := strings.TrimSpace(c.DatabasePath); p != "" {
		return config.ExpandHome(p)
	}
	return filepath.Join(home, "whatsapp-auth", "whatsmeow.db")
}
