package telegram

import (
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Config is nanobot's channels.telegram block, read unchanged.
type Config struct {
	Enabled               bool     `json:"enabled"`
	Token                 string   `json:"token"`
	APIBase               string   `json:"apiBase"` // Bot API server; "" = Telegram's (self-hosted servers, tests)
	Mode                  string   `json:"mode"`    // "polling" | "webhook"
	AllowFrom             []string `json:"allowFrom"`
	Proxy                 string   `json:"proxy"`
	ReplyToMessage        bool     `json:"replyToMessage"`
	ReactEmoji            string   `json:"reactEmoji"`
	GroupPolicy           string   `json:"groupPolicy"` // "open" | "mention"
	ConnectionPoolSize    int      `json:"connectionPoolSize" unused:"the Bot API client keeps Go's connection pool"`
	PoolTimeout           float64  `json:"poolTimeout" unused:"the Bot API client keeps Go's connection pool"`
	Streaming             bool     `json:"streaming"`
	StreamEditInterval    float64  `json:"streamEditInterval"` // seconds, ≥ 0.1
	InlineKeyboards       bool     `json:"inlineKeyboards" unused:"replies carry no inline keyboards"`
	RichMessages          bool     `json:"richMessages" unused:"replies are sent as Markdown, not with sendRichMessage"`
	WebhookURL            string   `json:"webhookUrl" unused:"Telegram runs in polling mode only"`
	WebhookListenHost     string   `json:"webhookListenHost" unused:"Telegram runs in polling mode only"`
	WebhookListenPort     int      `json:"webhookListenPort" unused:"Telegram runs in polling mode only"`
	WebhookPath           string   `json:"webhookPath" unused:"Telegram runs in polling mode only"`
	WebhookSecretToken    string   `json:"webhookSecretToken" unused:"Telegram runs in polling mode only"`
	WebhookMaxConnections int      `json:"webhookMaxConnections" unused:"Telegram runs in polling mode only"`
}

// defaults are nanobot's TelegramConfig defaults.
func defaults() Config {
	return Config{
		Mode:                  "polling",
		AllowFrom:             []string{},
		ReactEmoji:            "👀",
		GroupPolicy:           channels.PolicyMention,
		ConnectionPoolSize:    32,
		PoolTimeout:           5,
		Streaming:             true,
		StreamEditInterval:    0.6,
		WebhookListenHost:     "127.0.0.1",
		WebhookListenPort:     8081,
		WebhookPath:           "/telegram",
		WebhookMaxConnections: 4,
	}
}

// readConfig is channels.telegram over nanobot's defaults.
func readConfig(cfg *config.Config) (Config, error) { return channels.ValidBlock(cfg, Name, defaults) }

// Validate implements channels.Validator; a mode or apiBase this build
// cannot use is the constructor's warning, so the rest of the gateway starts.
func (c Config) Validate(where string) error {
	return channels.CheckOneOf(Name, "groupPolicy", c.GroupPolicy, where, channels.PolicyMention, channels.PolicyOpen)
}

func (c Config) On() bool { return c.Enabled }

// Allowed is nanobot's allowFrom: "*", an id, a username, or "id|username".
func (c Config) Allowed() channels.AllowFrom { return c.AllowFrom }

func (c Config) Lacking() []string { return channels.Blank(Name, "token", c.Token) }
