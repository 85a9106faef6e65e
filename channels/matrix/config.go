package matrix

import (
	"cmp"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Config is nanobot's channels.matrix block, key for key. Keys this build
// reads but does not act on are named in their comment.
type Config struct {
	Enabled     bool   `json:"enabled"`
	Homeserver  string `json:"homeserver"`
	UserID      string `json:"userId"`
	Password    string `json:"password"`
	AccessToken string `json:"accessToken"`
	DeviceID    string `json:"deviceId"`
	// E2EEEnabled: encrypted rooms are read and answered encrypted, the
	// device's keys kept in <nanobot home>/channels/matrix-crypto.db.
	E2EEEnabled bool `json:"e2eeEnabled"`
	// SASVerification: the bot's device is not verified interactively here;
	// it shares its room keys with unverified devices, as nanobot does.
	SASVerification bool `json:"sasVerification" unused:"interactive (SAS) verification is not in this build"`
	// SyncStopGraceSeconds bounds how long Stop waits for the sync loop.
	SyncStopGraceSeconds int `json:"syncStopGraceSeconds"`
	// MaxMediaBytes caps files both ways (0 refuses them all), lowered to
	// the homeserver's m.upload.size.
	MaxMediaBytes int64 `json:"maxMediaBytes"`
	// MaxConcurrentMediaDownloads: downloads run one message at a time here.
	MaxConcurrentMediaDownloads int      `json:"maxConcurrentMediaDownloads" unused:"downloads run one message at a time"`
	AllowFrom                   []string `json:"allowFrom"`
	// GroupPolicy is "open" (every room message), "mention" (the bot
	// mentioned) or "allowlist" (rooms in GroupAllowFrom); DMs always pass.
	GroupPolicy       string   `json:"groupPolicy"`
	GroupAllowFrom    []string `json:"groupAllowFrom"`
	AllowRoomMentions bool     `json:"allowRoomMentions"`
	Streaming         bool     `json:"streaming"`
}

// defaults are nanobot's MatrixConfig defaults.
func defaults() Config {
	return Config{
		Homeserver:                  "https://matrix.org",
		E2EEEnabled:                 true,
		SyncStopGraceSeconds:        2,
		MaxMediaBytes:               20 << 20,
		MaxConcurrentMediaDownloads: 2,
		GroupPolicy:                 channels.PolicyOpen,
	}
}

// groupGate is groupPolicy for room messages ("": open, as nanobot).
func (c Config) groupGate() channels.GroupGate {
	return channels.GroupGateOf(Name, cmp.Or(c.GroupPolicy, channels.PolicyOpen), c.GroupAllowFrom)
}

// block reads channels.matrix; a broken block is reported by Check at start.
func block(cfg *config.Config) Config {
	c, _ := channels.Block(cfg, Name, defaults)
	return c
}

// missing names the keys the channel cannot start without: nanobot's
// homeserver and userId, and a password or an access token. (nanobot also
// wants deviceId with a token, for its crypto store; here whoami tells
// the device, so a block without it works too.)
func missing(c Config) []string {
	var keys []string
	if strings.TrimSpace(c.Homeserver) == "" {
		keys = append(keys, "channels.matrix.homeserver")
	}
	if strings.TrimSpace(c.UserID) == "" {
		keys = append(keys, "channels.matrix.userId")
	}
	if c.Password == "" && c.AccessToken == "" {
		keys = append(keys, "channels.matrix.password (or accessToken)")
	}
	return keys
}
