package wecom

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Config is nanobot's channels.wecom block (WecomConfig), read unchanged.
type Config struct {
	Enabled bool `json:"enabled"`
	// BotID and Secret are the AI bot's credentials (WeCom admin console,
	// AI bot, API mode, long connection).
	BotID  string `json:"botId"`
	Secret string `json:"secret"`
	// AllowFrom are WeCom userids ("*": everyone); the manager checks them.
	AllowFrom []string `json:"allowFrom"`
	// WelcomeMessage answers enter_chat (a user opening the bot's chat); "" = none.
	WelcomeMessage string `json:"welcomeMessage"`
	// WSURL replaces wss://openws.work.weixin.qq.com (the SDK's ws_url):
	// tests point it at a fake server.
	WSURL string `json:"wsUrl"`
}

// defaultWSURL is WeCom's long-connection endpoint for AI bots.
const defaultWSURL = "wss://openws.work.weixin.qq.com"

// defaults are nanobot's WecomConfig defaults.
func defaults() Config { return Config{} }

// readConfig is channels.wecom over nanobot's defaults.
func readConfig(cfg *config.Config) (Config, error) { return channels.ValidBlock(cfg, Name, defaults) }

// Validate implements channels.Validator: the values make sense.
func (c Config) Validate(where string) error {
	return channels.CheckURL(Name, "wsUrl", c.WSURL, where, "ws", "wss")
}

// endpoint is the WebSocket URL the channel dials.
func (c Config) endpoint() string {
	if u := strings.TrimSpace(c.WSURL); u != "" {
		return u
	}
	return defaultWSURL
}
