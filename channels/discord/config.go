package discord

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Config is nanobot's channels.discord block, read unchanged.
type Config struct {
	Enabled bool   `json:"enabled"`
	Token   string `json:"token"`
	// AllowFrom are Discord user ids ("*": everyone); the manager checks them.
	AllowFrom []string `json:"allowFrom"`
	// AllowChannels are the channel ids the bot answers in (a thread counts
	// as its parent too); empty: every channel.
	AllowChannels []string `json:"allowChannels"`
	// Intents is the gateway intents bitfield.
	Intents int `json:"intents"`
	// GroupPolicy is "mention" (answer in a guild only when @-mentioned or
	// replied to) or "open" (every message).
	GroupPolicy string `json:"groupPolicy"`
	// ReadReceiptEmoji goes on the user's message while its turn runs ("" = none).
	ReadReceiptEmoji string `json:"readReceiptEmoji"`
	// WorkingEmoji joins it after WorkingEmojiDelay seconds ("" = none).
	WorkingEmoji      string  `json:"workingEmoji"`
	WorkingEmojiDelay float64 `json:"workingEmojiDelay"`
	// Streaming draws the reply by editing one message as it is generated.
	Streaming     bool   `json:"streaming"`
	Proxy         string `json:"proxy"`
	ProxyUsername string `json:"proxyUsername"`
	ProxyPassword string `json:"proxyPassword"`
	// APIBase replaces https://discord.com/ for the REST API (tests,
	// self-hosted proxies); the gateway URL comes from its /gateway/bot.
	APIBase string `json:"apiBase"`
}

// Intents nanobot asks for: GUILDS, GUILD_MESSAGES, DIRECT_MESSAGES, MESSAGE_CONTENT.
const defaultIntents = 37377

// defaults are nanobot's DiscordConfig defaults.
func defaults() Config {
	return Config{
		Intents: defaultIntents, GroupPolicy: channels.PolicyMention,
		ReadReceiptEmoji: "👀", WorkingEmoji: "🔧", WorkingEmojiDelay: 2.0,
		Streaming: true,
	}
}

// readConfig is channels.discord over nanobot's defaults.
func readConfig(cfg *config.Config) (Config, error) { return channels.ValidBlock(cfg, Name, defaults) }

// Validate implements channels.Validator: the values make sense.
func (c Config) Validate(where string) error {
	if err := channels.CheckOneOf(Name, "groupPolicy", c.GroupPolicy, where, channels.PolicyMention, channels.PolicyOpen); err != nil {
		return err
	}
	if err := channels.CheckAtLeast(Name, "intents", c.Intents, 0, where); err != nil {
		return err
	}
	for key, raw := range map[string]string{"apiBase": c.APIBase, "proxy": c.Proxy} {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		if u, err := url.Parse(raw); err != nil || u.Host == "" || u.Scheme == "" {
			return fmt.Errorf("channels.discord.%s %q is not a URL%s", key, raw, where)
		}
	}
	return nil
}
