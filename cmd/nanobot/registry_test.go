package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// block sets channels.<name> as nanobot's config.json would hold it.
func block(cfg *config.Config, name string, v map[string]any) {
	raw, _ := json.Marshal(v)
	if cfg.Channels.Other == nil {
		cfg.Channels.Other = map[string]json.RawMessage{}
	}
	cfg.Channels.Other[name] = raw
}

// owners are the allowed sender of a row where "owner" is not an id the platform has.
var owners = map[string]string{"email": "owner@example.com", "matrix": "@owner:example.org", "signal": "+15557654321"}

// channelRows turn each registered channel on, with "owner" as its only
// allowed sender. A channel registered without a row fails the test below:
// forgetting one is a red test, not a silent refusal at run time.
var channelRows = map[string]func(cfg *config.Config){
	"cli": nil, // built by `nanobot agent`, not by a gateway
	"api": func(cfg *config.Config) { cfg.API.Enabled = true },
	"web": func(cfg *config.Config) { block(cfg, "web", map[string]any{"enabled": true}) },
	"telegram": func(cfg *config.Config) {
		block(cfg, "telegram", map[string]any{"enabled": true, "token": "123:abc", "allowFrom": []string{"owner"}})
	},
	"slack": func(cfg *config.Config) {
		block(cfg, "slack", map[string]any{"enabled": true, "botToken": "xoxb-1", "appToken": "xapp-1", "allowFrom": []string{"owner"}})
	},
	"email": func(cfg *config.Config) {
		block(cfg, "email", map[string]any{"enabled": true, "consentGranted": true,
			"imapHost": "127.0.0.1", "imapUsername": "bot", "imapPassword": "pw",
			"smtpHost": "127.0.0.1", "smtpUsername": "bot", "smtpPassword": "pw",
			"fromAddress": "bot@example.com", "allowFrom": []string{"owner@example.com"}})
	},
	"discord": func(cfg *config.Config) {
		block(cfg, "discord", map[string]any{"enabled": true, "token": "discord-token", "allowFrom": []string{"owner"}})
	},
	"feishu": func(cfg *config.Config) {
		block(cfg, "feishu", map[string]any{"enabled": true, "appId": "cli_test", "appSecret": "secret", "allowFrom": []string{"owner"}})
	},
	"dingtalk": func(cfg *config.Config) {
		block(cfg, "dingtalk", map[string]any{"enabled": true, "clientId": "ding-app", "clientSecret": "ding-secret", "allowFrom": []string{"owner"}})
	},
	"matrix": func(cfg *config.Config) {
		block(cfg, "matrix", map[string]any{"enabled": true, "homeserver": "http://127.0.0.1:8008",
			"userId": "@bot:example.org", "accessToken": "syt_test", "allowFrom": []string{"@owner:example.org"}})
	},
	"mattermost": func(cfg *config.Config) {
		block(cfg, "mattermost", map[string]any{"enabled": true, "serverUrl": "http://127.0.0.1:8065", "token": "mm-token", "allowFrom": []string{"owner"}})
	},
	"wecom": func(cfg *config.Config) {
		block(cfg, "wecom", map[string]any{"enabled": true, "botId": "aib-1", "secret": "s", "allowFrom": []string{"owner"}})
	},
	"qq": func(cfg *config.Config) {
		block(cfg, "qq", map[string]any{"enabled": true, "appId": "102000001", "secret": "qq-secret", "allowFrom": []string{"owner"}})
	},
	"weixin": func(cfg *config.Config) {
		block(cfg, "weixin", map[string]any{"enabled": true, "token": "wx-token", "allowFrom": []string{"owner"}})
	},
	"whatsapp": func(cfg *config.Config) {
		block(cfg, "whatsapp", map[string]any{"enabled": true, "allowFrom": []string{"owner"}})
	},
	"signal": func(cfg *config.Config) {
		block(cfg, "signal", map[string]any{"enabled": true, "phoneNumber": "+15551234567", "dm": map[string]any{"enabled": true, "policy": "allowlist", "allowFrom": []string{"+15557654321"}}})
	},
	"msteams": func(cfg *config.Config) {
		block(cfg, "msteams", map[string]any{"enabled": true, "appId": "app-1", "appPassword": "pw", "allowFrom": []string{"owner"}})
	},
}

// TestEveryRegisteredChannelIsBuiltQueuedAndGated: for every channel of
// this build, the gateway builds it, polls its delivery queue (or its own
// process queue for a per-process channel), lists it in the banner, and
// admits by its allow list.
func TestEveryRegisteredChannelIsBuiltQueuedAndGated(t *testing.T) {
	for _, spec := range channels.Specs() {
		t.Run(spec.Name, func(t *testing.T) {
			enable, ok := channelRows[spec.Name]
			require.True(t, ok, "channel %q is registered but has no row in channelRows", spec.Name)
			require.True(t, channels.IsKnown(spec.Name))
			if enable == nil {
				require.Nil(t, spec.New)
				return
			}
			cfg := config.Default()
			block(cfg, "web", map[string]any{"enabled": false})
			enable(cfg)
			require.Contains(t, channels.EnabledNames(cfg), spec.Name)
			built := channels.Build(cfg, channels.Deps{Config: cfg, Workspace: t.TempDir(), ProcessQueue: "nanobot-gateway-test"}, nil)
			require.Empty(t, built.Warnings)
			require.Len(t, built.Channels, 1)
			require.Equal(t, spec.Name, built.Channels[0].Name())
			stamped := protocol.Route{Channel: spec.Name, ChatID: "x"}
			channels.StampReach(&stamped)
			if spec.PerProcess {
				require.Equal(t, []string{"nanobot-gateway-test"}, built.Queues)
				require.False(t, stamped.Deliverable(), "only its process can answer")
			} else {
				require.Contains(t, built.Queues, protocol.ChannelQueue(spec.Name))
				require.True(t, stamped.Deliverable())
			}
			mgr := channels.NewManager()
			mgr.Add(built.Channels[0])
			var banner bytes.Buffer
			(&app{stdout: &banner}).channelLines(mgr)
			require.Contains(t, banner.String(), spec.Name)
			owner := owners[spec.Name]
			if owner == "" {
				owner = "owner"
			}
			allow := channels.AllowFromFor(cfg, spec.Name)
			require.True(t, allow.Allows(owner))
			if spec.AllowFrom != nil {
				require.False(t, allow.Allows("stranger"), "only the allow list (and pairing) lets a sender in")
			}
		})
	}
}

// TestABlockSpeltOtherwiseIsStillTheBuiltInChannel: "Discord" is read as
// channels.discord, so it is built, not reported as a channel this build lacks.
func TestABlockSpeltOtherwiseIsStillTheBuiltInChannel(t *testing.T) {
	cfg := config.Default()
	block(cfg, "web", map[string]any{"enabled": false})
	block(cfg, "Discord", map[string]any{"enabled": true, "token": "discord-token"})
	built := channels.Build(cfg, channels.Deps{Config: cfg, Workspace: t.TempDir(), ProcessQueue: "q"}, nil)
	require.Empty(t, built.Warnings)
	require.Len(t, built.Channels, 1)
	require.Equal(t, "discord", built.Channels[0].Name())
}
