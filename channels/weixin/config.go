package weixin

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Config is nanobot's channels.weixin block, key for key. Keys this build
// reads but does not act on are named in their comment.
type Config struct {
	Enabled bool `json:"enabled"`
	// AllowFrom are WeChat user ids (xxx@im.wechat, a group's xxx@chatroom) or "*".
	AllowFrom []string `json:"allowFrom"`
	// BaseURL is the iLink bot API; a QR login stores the one WeChat names
	// and that wins (tests point both at the fake server).
	BaseURL string `json:"baseUrl"`
	// CDNBaseURL is where encrypted media are downloaded from.
	CDNBaseURL string `json:"cdnBaseUrl"`
	// RouteTag goes out as the SKRouteTag header (a string or a number).
	RouteTag any `json:"routeTag"`
	// Token is a bot token set by hand; normally the QR login stores one.
	Token string `json:"token"`
	// StateDir holds account.json (default: <nanobot home>/weixin).
	StateDir string `json:"stateDir"`
	// PollTimeout is the long poll's length in seconds (the server may change it).
	PollTimeout int `json:"pollTimeout"`
	// The progress, block streaming and budget keys are read for nanobot's
	// config to load unchanged; this build sends answers only.
	SendProgress              bool `json:"sendProgress" unused:"WeChat gets the answers only"`
	SendToolHints             bool `json:"sendToolHints" unused:"WeChat gets the answers only"`
	ReplyProgressMessages     bool `json:"replyProgressMessages" unused:"WeChat gets the answers only"`
	ReplyProgressMaxMessages  int  `json:"replyProgressMaxMessages" unused:"WeChat gets the answers only"`
	ContextMessageBudget      int  `json:"contextMessageBudget" unused:"replies that wait for a context token are not queued"`
	Streaming                 bool `json:"streaming" unused:"WeChat gets the answers only"`
	BlockStreaming            bool `json:"blockStreaming" unused:"WeChat gets the answers only"`
	BlockStreamingMinChars    int  `json:"blockStreamingMinChars" unused:"WeChat gets the answers only"`
	BlockStreamingMaxMessages int  `json:"blockStreamingMaxMessages" unused:"WeChat gets the answers only"`
}

// routeTag is nanobot's `str | int | None` route_tag as the header's value.
func (c Config) routeTag() (string, error) {
	switch v := c.RouteTag.(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return "", fmt.Errorf("channels.weixin.routeTag %v is not an integer", v)
		}
		return strconv.FormatInt(int64(v), 10), nil
	}
	return "", fmt.Errorf("channels.weixin.routeTag is neither a string nor an integer")
}

// defaults are nanobot's WeixinConfig defaults.
func defaults() Config {
	return Config{
		BaseURL:                   "https://ilinkai.weixin.qq.com",
		CDNBaseURL:                "https://novac2c.cdn.weixin.qq.com/c2c",
		PollTimeout:               35,
		ReplyProgressMaxMessages:  2,
		ContextMessageBudget:      8,
		Streaming:                 true,
		BlockStreamingMinChars:    1200,
		BlockStreamingMaxMessages: 3,
	}
}

// block reads channels.weixin; a broken block is reported by Check at start.
func block(cfg *config.Config) Config {
	c, _ := channels.Block(cfg, Name, defaults)
	return c
}

// check is the Spec's Check: the block reads and its URLs are URLs.
func check(cfg *config.Config) ([]config.Warning, error) {
	warnings, err := channels.CheckBlock(Name, defaults)(cfg)
	if err != nil {
		return warnings, err
	}
	c := block(cfg)
	where := ""
	if cfg != nil && cfg.Path != "" {
		where = " (" + cfg.Path + ")"
	}
	for key, raw := range map[string]string{"baseUrl": c.BaseURL, "cdnBaseUrl": c.CDNBaseURL} {
		if u, err := url.Parse(strings.TrimSpace(raw)); err != nil || u.Host == "" || u.Scheme == "" {
			return warnings, fmt.Errorf("channels.weixin.%s %q is not a URL%s", key, raw, where)
		}
	}
	if _, err := c.routeTag(); err != nil {
		return warnings, fmt.Errorf("%w%s", err, where)
	}
	return warnings, channels.CheckAtLeast(Name, "pollTimeout", c.PollTimeout, 0, where)
}
