package feishu

import (
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Config is nanobot's channels.feishu block (FeishuConfig), read unchanged.
type Config struct {
	Enabled   bool   `json:"enabled"`
	AppID     string `json:"appId"`
	AppSecret string `json:"appSecret"`
	// EncryptKey decrypts events an app with an Encrypt Key gets encrypted.
	EncryptKey string `json:"encryptKey"`
	// VerificationToken belongs to webhook delivery; the long connection
	// does not use it (kept so nanobot's block reads unchanged).
	VerificationToken string `json:"verificationToken"`
	// AllowFrom are the senders' open_ids ("*": everyone); the manager checks them.
	AllowFrom []string `json:"allowFrom"`
	// ReactEmoji goes on the user's message while its turn runs ("" = none).
	ReactEmoji string `json:"reactEmoji"`
	// DoneEmoji, when set, replaces it once the answer is out.
	DoneEmoji      string `json:"doneEmoji"`
	ToolHintPrefix string `json:"toolHintPrefix"`
	// GroupPolicy is "mention" (answer in a group only when @-mentioned) or "open".
	GroupPolicy string `json:"groupPolicy"`
	// ReplyToMessage quotes the user's message (and opens a topic in a group).
	ReplyToMessage bool `json:"replyToMessage"`
	// Streaming draws the reply by updating its card as it is generated.
	Streaming bool `json:"streaming"`
	// Domain is "feishu" (open.feishu.cn) or "lark" (open.larksuite.com).
	Domain string `json:"domain"`
	// TopicIsolation gives each group topic a session of its own.
	TopicIsolation bool `json:"topicIsolation"`
	// nanobot's multi-instance bookkeeping, read and not used here.
	InstanceID  string `json:"instanceId" unused:"one Feishu app per block in this build"`
	Name        string `json:"name" unused:"one Feishu app per block in this build"`
	IdentityKey string `json:"identityKey" unused:"one Feishu app per block in this build"`
	// APIBase replaces the domain's https://open.… base for every call, the
	// endpoint discovery included (tests, proxies). Not in nanobot.
	APIBase string `json:"apiBase"`
}

// Domains and their API bases.
var domainBase = map[string]string{
	"feishu": "https://open.feishu.cn",
	"lark":   "https://open.larksuite.com",
}

// defaults are nanobot's FeishuConfig defaults.
func defaults() Config {
	return Config{
		InstanceID: "default", Name: "nanobot", ReactEmoji: "THUMBSUP", ToolHintPrefix: "\U0001f527",
		GroupPolicy: channels.PolicyMention, Streaming: true, Domain: "feishu", TopicIsolation: true,
	}
}

// base is where the API is: apiBase, else the domain's.
func (c Config) base() string {
	if c.APIBase != "" {
		return strings.TrimRight(c.APIBase, "/")
	}
	return domainBase[c.Domain]
}

// readConfig is channels.feishu over nanobot's defaults.
func readConfig(cfg *config.Config) (Config, error) { return channels.ValidBlock(cfg, Name, defaults) }

// Validate implements channels.Validator: the values make sense.
func (c Config) Validate(where string) error {
	if err := channels.CheckOneOf(Name, "groupPolicy", c.GroupPolicy, where, channels.PolicyMention, channels.PolicyOpen); err != nil {
		return err
	}
	if err := channels.CheckOneOf(Name, "domain", c.Domain, where, "feishu", "lark"); err != nil {
		return err
	}
	return channels.CheckURL(Name, "apiBase", c.APIBase, where, "http", "https")
}
