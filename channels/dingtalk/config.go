package dingtalk

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Config is nanobot's channels.dingtalk block, read unchanged.
type Config struct {
	Enabled bool `json:"enabled"`
	// ClientID and ClientSecret are the app's credentials (AppKey and
	// AppSecret); the client id is also the robot's robotCode.
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	// AllowFrom are staff ids ("*": everyone); the manager checks them.
	AllowFrom []string `json:"allowFrom"`
	// AllowRemoteMediaRedirects lets a media URL sent out redirect, to the
	// same host or one of RemoteMediaRedirectAllowedHosts.
	AllowRemoteMediaRedirects       bool     `json:"allowRemoteMediaRedirects" unused:"a media URL in a reply is sent as a link, never fetched"`
	RemoteMediaRedirectAllowedHosts []string `json:"remoteMediaRedirectAllowedHosts" unused:"a media URL in a reply is sent as a link, never fetched"`
	// GroupUserIsolation gives each member of a group a session of its own.
	GroupUserIsolation bool `json:"groupUserIsolation"`
	// DisablePrivateChat answers direct messages with a notice and nothing more.
	DisablePrivateChat bool `json:"disablePrivateChat"`
	// APIBase replaces https://api.dingtalk.com (and https://oapi.dingtalk.com,
	// for uploads) for every call: tests, proxies. Not one of nanobot's keys.
	APIBase string `json:"apiBase"`
}

// The hosts DingTalk serves its APIs on.
const (
	defaultAPIBase  = "https://api.dingtalk.com"
	defaultOAPIBase = "https://oapi.dingtalk.com"
)

// defaults are nanobot's DingTalkConfig defaults.
func defaults() Config { return Config{} }

// readConfig is channels.dingtalk over nanobot's defaults.
func readConfig(cfg *config.Config) (Config, error) { return channels.ValidBlock(cfg, Name, defaults) }

// Validate implements channels.Validator: the values make sense.
func (c Config) Validate(where string) error {
	return channels.CheckURL(Name, "apiBase", c.APIBase, where, "http", "https")
}

// bases are the API hosts the channel calls: DingTalk's, or apiBase for both.
func (c Config) bases() (api, oapi string) {
	if b := strings.TrimRight(strings.TrimSpace(c.APIBase), "/"); b != "" {
		return b, b
	}
	return defaultAPIBase, defaultOAPIBase
}
