// Package all links every channel of this build: importing it registers
// them (see channels.Register). A new channel is its folder plus one line
// here.
package all

import (
	_ "github.com/nanobot-durable/nanobot/channels/api"
	_ "github.com/nanobot-durable/nanobot/channels/dingtalk"
	_ "github.com/nanobot-durable/nanobot/channels/discord"
	_ "github.com/nanobot-durable/nanobot/channels/email"
	_ "github.com/nanobot-durable/nanobot/channels/feishu"
	_ "github.com/nanobot-durable/nanobot/channels/matrix"
	_ "github.com/nanobot-durable/nanobot/channels/mattermost"
	_ "github.com/nanobot-durable/nanobot/channels/qq"
	_ "github.com/nanobot-durable/nanobot/channels/signal"
	_ "github.com/nanobot-durable/nanobot/channels/slack"
	_ "github.com/nanobot-durable/nanobot/channels/teams"
	_ "github.com/nanobot-durable/nanobot/channels/telegram"
	_ "github.com/nanobot-durable/nanobot/channels/web"
	_ "github.com/nanobot-durable/nanobot/channels/wecom"
	_ "github.com/nanobot-durable/nanobot/channels/weixin"
	_ "github.com/nanobot-durable/nanobot/channels/whatsapp"
)
