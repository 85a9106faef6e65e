package teams

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// Config is nanobot's channels.msteams block; openIdMetadata, tokenEndpoint,
// allowedHosts, groupPolicy and streaming are this build's additions.
type Config struct {
	Enabled     bool   `json:"enabled"`
	AppID       string `json:"appId"`
	AppPassword string `json:"appPassword"`
	// TenantID picks the token endpoint of a single-tenant bot ("": botframework.com).
	TenantID string `json:"tenantId"`
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Path     string `json:"path"`
	// AllowFrom are AAD object ids (or Teams user ids), or "*".
	AllowFrom     []string `json:"allowFrom"`
	ReplyInThread bool     `json:"replyInThread"`
	// MentionOnlyResponse is what a bare mention (no text) asks, as in nanobot.
	MentionOnlyResponse string `json:"mentionOnlyResponse"`
	// ValidateInboundAuth checks the Bot Connector's JWT; off only on loopback.
	ValidateInboundAuth bool `json:"validateInboundAuth"`
	// TrustedServiceURLHosts are the hosts replies may go to (the
	// connector's bearer token is sent there); "*.x" matches subdomains.
	TrustedServiceURLHosts []string `json:"trustedServiceUrlHosts"`
	// AllowedHosts are the Host names the endpoint answers to behind a
	// proxy or tunnel (hostcheck), beside loopback and its own address.
	AllowedHosts []string `json:"allowedHosts"`
	// GroupPolicy is "mention" (channels and group chats: only when
	// @-mentioned) or "open".
	GroupPolicy string `json:"groupPolicy"`
	// Streaming draws the reply by editing one message as it is generated.
	Streaming bool `json:"streaming"`
	// nanobot's pruning of its conversation references: read, and a value
	// other than nanobot's default is warned about (they do nothing here).
	RefTTLDays           int  `json:"refTtlDays" unused:"a conversation's serviceUrl is kept until it writes from another; references do not expire"`
	PruneWebChatRefs     bool `json:"pruneWebChatRefs" unused:"references are not pruned"`
	PruneNonPersonalRefs bool `json:"pruneNonPersonalRefs" unused:"channel and group conversations are answered (groupPolicy), so their references are kept"`
	RefTouchIntervalS    int  `json:"refTouchIntervalS" unused:"references carry no age to refresh"`
	// OpenIDMetadata is the Bot Connector's OpenID configuration (its jwks_uri signs the tokens).
	OpenIDMetadata string `json:"openIdMetadata"`
	// TokenEndpoint issues the bot's AAD token ("": from tenantId).
	TokenEndpoint string `json:"tokenEndpoint"`
}

// defaults are nanobot's MSTeamsConfig defaults, but listening on loopback
// (behind the tunnel or proxy that gives it HTTPS) unless host says otherwise.
func defaults() Config {
	return Config{
		Host: "127.0.0.1", Port: 3978, Path: "/api/messages", ReplyInThread: true,
		MentionOnlyResponse: "Hi — what can I help with?", ValidateInboundAuth: true,
		TrustedServiceURLHosts: []string{"smba.trafficmanager.net", "smba.infra.gcc.teams.microsoft.com",
			"smba.infra.gov.teams.microsoft.us", "smba.infra.dod.teams.microsoft.us", "*.botframework.com"},
		GroupPolicy:    channels.PolicyMention,
		Streaming:      true,
		OpenIDMetadata: "https://login.botframework.com/v1/.well-known/openidconfiguration",
		// nanobot's, so its own block is not warned about
		RefTTLDays: 30, PruneWebChatRefs: true, PruneNonPersonalRefs: true, RefTouchIntervalS: 300,
	}
}

// tokenURL is where the bot's AAD token comes from.
func (c Config) tokenURL() string {
	if c.TokenEndpoint != "" {
		return c.TokenEndpoint
	}
	tenant := strings.TrimSpace(c.TenantID)
	if tenant == "" {
		tenant = "botframework.com"
	}
	return "https://login.microsoftonline.com/" + tenant + "/oauth2/v2.0/token"
}

// Validate implements channels.Validator.
func (c Config) Validate(where string) error {
	if err := errors.Join(channels.CheckOneOf(Name, "groupPolicy", c.GroupPolicy, where, channels.PolicyMention, channels.PolicyOpen),
		channels.CheckPort(Name, "port", c.Port, true, where)); err != nil {
		return err
	}
	if !strings.HasPrefix(c.Path, "/") {
		return fmt.Errorf("channels.msteams.path %q does not start with /%s", c.Path, where)
	}
	for key, raw := range map[string]string{"openIdMetadata": c.OpenIDMetadata, "tokenEndpoint": c.TokenEndpoint} {
		if err := channels.CheckURL(Name, key, raw, where, "https", "http"); err != nil {
			return err
		}
	}
	return nil
}

func (c Config) On() bool { return c.Enabled }

// Allowed is nanobot's allowFrom.
func (c Config) Allowed() channels.AllowFrom { return c.AllowFrom }

func (c Config) Lacking() []string {
	return channels.Blank(Name, "appId", c.AppID, "appPassword", c.AppPassword)
}
