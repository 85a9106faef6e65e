package wecom

import (
	"fmt"
	"net/url"
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
func readConfig(cfg *config.Config) (Config, error) {
	c, err := channels.Block(cfg, Name, defaults)
	if err != nil {
		return c, err
	}
	return c, c.validate(cfg)
}

// check is the Spec's Check: the block reads, and its values make sense.
func check(cfg *config.Config) ([]config.Warning, error) {
	warnings, err := channels.CheckBlock(Name, defaults)(cfg)
	if err != nil {
		return warnings, err
	}
	c, _ := channels.Block(cfg, Name, defaults)
	return warnings, c.validate(cfg)
}

func (c Config) validate(cfg *config.Config) error {
	if strings.TrimSpace(c.WSURL) == "" {
		return nil
	}
	where := ""
	if cfg != nil && cfg.Path != "" {
		where = " (" + cfg.Path + ")"
	}
	u, err := url.Parse(c.WSURL)
	if err != nil || u.Host == "" || (u.Scheme != "ws" && u.Scheme != "wss") {
		return fmt.Errorf("channels.wecom.wsUrl %q is not a ws:// or wss:// URL%s", c.WSURL, where)
	}
	return nil
}

// endpoint is the WebSocket URL the channel dials.
func (c Config) endpoint() string {
	if u := strings.TrimSpace(c.WSURL); u != "" {
		return u
	}
	return defaultWSURL
}
