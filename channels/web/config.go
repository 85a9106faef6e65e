package web

import (
	"fmt"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Config is channels.web: the chat page the gateway serves.
type Config struct {
	// Enabled unset means on when the gateway runs on a local Temporal
	// (TEMPORAL_ADDRESS unset), off against an external cluster.
	Enabled *bool  `json:"enabled,omitempty"`
	Host    string `json:"host"`
	Port    int    `json:"port"`
	// Token, when set, is required by every request (Bearer header, ?token= or the page's cookie);
	// a host beyond loopback requires one.
	Token string `json:"token"`
	// AllowedHosts are Host names the chat (and the gateway's /health and /ready) answer to
	// beside 127.0.0.1, localhost, [::1] and the bound IP; others get 421 (not in nanobot).
	AllowedHosts []string `json:"allowedHosts"`
}

// defaults are nanobot's: the gateway's port on this machine only.
func defaults() Config { return Config{Host: "127.0.0.1", Port: 18790} }

// ReadConfig is channels.web over its defaults, for the commands that show
// or share its settings (the banner, nanobot status, the health endpoints).
func ReadConfig(cfg *config.Config) (Config, error) { return channels.Block(cfg, Name, defaults) }

// EnabledOr tells whether the web chat runs, given the default for this process.
func (c Config) EnabledOr(def bool) bool {
	if c.Enabled == nil {
		return def
	}
	return *c.Enabled
}

// check is the block's own check of its values, an error naming the key and the file.
func (c Config) check(cfg *config.Config) error {
	if c.Port < 0 || c.Port > 65535 {
		return cfg.KeyError("channels.web.port", fmt.Sprintf("%d is not a TCP port (0–65535)", c.Port))
	}
	if strings.TrimSpace(c.Host) == "" {
		return cfg.KeyError("channels.web.host", "empty: use 127.0.0.1 (this machine only) or an address to listen on")
	}
	return nil
}

// checkConfig is the web chat's Spec.Check.
func checkConfig(cfg *config.Config) ([]config.Warning, error) {
	warnings, err := channels.CheckBlock(Name, defaults)(cfg)
	if err != nil {
		return warnings, err
	}
	c, _ := ReadConfig(cfg)
	return warnings, c.check(cfg)
}
