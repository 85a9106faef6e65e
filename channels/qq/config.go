package qq

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// Config is nanobot's channels.qq block, read unchanged.
type Config struct {
	Enabled bool   `json:"enabled"`
	AppID   string `json:"appId"`
	Secret  string `json:"secret"`
	// AllowFrom are user openids (C2C) or member openids (groups); "*": everyone.
	AllowFrom []string `json:"allowFrom"`
	// MsgFormat is "plain" (msg_type 0) or "markdown" (msg_type 2, for bots
	// QQ lets send Markdown).
	MsgFormat string `json:"msgFormat"`
	// AckMessage is sent at once to an admitted message ("" = none).
	AckMessage string `json:"ackMessage"`
	// MediaDir is nanobot's attachment folder; here files go to <workspace>/media.
	MediaDir          string `json:"mediaDir" unused:"attachments go to <workspace>/media"`
	DownloadChunkSize int    `json:"downloadChunkSize" unused:"downloads are streamed whole"`
	DownloadMaxBytes  int64  `json:"downloadMaxBytes"`
	// APIBase replaces https://api.sgroup.qq.com (REST and /gateway) — for
	// tests and proxies; not one of nanobot's keys.
	APIBase string `json:"apiBase"`
	// AuthBase replaces https://bots.qq.com, where access tokens come from
	// (app/getAppAccessToken); not one of nanobot's keys.
	AuthBase string `json:"authBase"`
}

// The platform's hosts.
const (
	defaultAPIBase  = "https://api.sgroup.qq.com"
	defaultAuthBase = "https://bots.qq.com"
)

// Message formats (msgFormat).
const (
	formatPlain    = "plain"
	formatMarkdown = "markdown"
)

// defaults are nanobot's QQConfig defaults.
func defaults() Config {
	return Config{
		MsgFormat: formatPlain, AckMessage: "⏳ Processing...",
		DownloadChunkSize: 256 << 10, DownloadMaxBytes: 200 << 20,
	}
}

// Validate implements channels.Validator: the values make sense.
func (c Config) Validate(where string) error {
	if err := channels.CheckOneOf(Name, "msgFormat", c.MsgFormat, where, formatPlain, formatMarkdown); err != nil {
		return err
	}
	for key, raw := range map[string]string{"apiBase": c.APIBase, "authBase": c.AuthBase} {
		if err := channels.CheckURL(Name, key, raw, where, "http", "https"); err != nil {
			return err
		}
	}
	return nil
}

// apiBase is the REST base without a trailing slash.
func (c Config) apiBase() string { return baseOr(c.APIBase, defaultAPIBase) }

// authBase is the token service's base without a trailing slash.
func (c Config) authBase() string { return baseOr(c.AuthBase, defaultAuthBase) }

func baseOr(v, def string) string {
	if v = strings.TrimSpace(v); v == "" {
		return def
	}
	return strings.TrimRight(v, "/")
}
