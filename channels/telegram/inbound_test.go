package telegram

import (
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"
)

var botUser = &models.User{ID: 666, IsBot: true, Username: "NanoBot"}

func TestSenderIDAsNanobotSpellsIt(t *testing.T) {
	require.Equal(t, "42|alice", SenderID(&models.User{ID: 42, Username: "alice"}))
	require.Equal(t, "42", SenderID(&models.User{ID: 42}))
	require.Equal(t, "", SenderID(nil))
}

func TestMentioned(t *testing.T) {
	cases := []struct {
		name string
		msg  models.Message
		want bool
	}{
		{"at mention", models.Message{Text: "@NanoBot hi"}, true},
		{"any case", models.Message{Text: "hey @nanobot, hi"}, true},
		{"caption", models.Message{Caption: "look @NanoBot"}, true},
		{"no mention", models.Message{Text: "hello everyone"}, false},
		{"longer name is someone else", models.Message{Text: "@NanoBotFan hi"}, false},
		{"email is not a mention", models.Message{Text: "mail me at x@NanoBot.org"}, false},
		{"reply to the bot", models.Message{Text: "and then?", ReplyToMessage: &models.Message{From: botUser}}, true},
		{"reply to someone else", models.Message{Text: "and then?", ReplyToMessage: &models.Message{From: &models.User{ID: 1}}}, false},
		{"text mention", models.Message{Text: "Nano look", Entities: []models.MessageEntity{{Type: models.MessageEntityTypeTextMention, User: botUser}}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, mentioned(&c.msg, botUser))
		})
	}
}

func TestStripMention(t *testing.T) {
	require.Equal(t, "what's up", StripMention("@NanoBot what's up", "NanoBot"))
	require.Equal(t, "hi there", StripMention("hi @nanobot there", "NanoBot"))
	require.Equal(t, "line one\nline two", StripMention("line one\nline two", "NanoBot"), "newlines survive")
	require.Equal(t, "/help@NanoBot", StripMention("/help@NanoBot", "NanoBot"), "a command's suffix is ParseCommand's")
	require.Equal(t, "x@NanoBot.org", StripMention("x@NanoBot.org", "NanoBot"))
}

func TestCommandTarget(t *testing.T) {
	require.Equal(t, "NanoBot", commandTarget("/help@NanoBot"))
	require.Equal(t, "other_bot", commandTarget("/new@other_bot now"))
	require.Equal(t, "", commandTarget("/help"))
	require.Equal(t, "", commandTarget("mail a@b"))
}

func testChannel(policy string, replyTo bool) *Channel {
	c := &Channel{me: botUser, cfg: Config{GroupPolicy: policy, ReplyToMessage: replyTo}}
	c.Init(Name, nil, nil)
	return c
}

func TestInboundRouteAndGroupPolicy(t *testing.T) {
	alice := &models.User{ID: 42, Username: "alice", FirstName: "Alice"}
	dm := &models.Message{ID: 5, Date: 1700000000, From: alice, Chat: models.Chat{ID: 42, Type: models.ChatTypePrivate}, Text: "hello"}

	in, ok := testChannel("mention", false).inbound(dm)
	require.True(t, ok)
	require.Equal(t, "telegram", in.Route.Channel)
	require.Equal(t, "42", in.Route.ChatID)
	require.Equal(t, "42|alice", in.Route.SenderID)
	require.Empty(t, in.Route.ReplyTo, "replyToMessage off")
	require.False(t, in.Group)
	require.Equal(t, int64(1700000000), in.SentAt.Unix())
	require.Equal(t, "hello", in.Content)

	in, _ = testChannel("mention", true).inbound(dm)
	require.Equal(t, "5", in.Route.ReplyTo)

	group := func(text string) *models.Message {
		return &models.Message{ID: 9, From: alice, Chat: models.Chat{ID: -100, Type: models.ChatTypeSupergroup}, Text: text}
	}
	_, ok = testChannel("mention", false).inbound(group("hello all"))
	require.False(t, ok, "mention policy: a group message without a mention is not for the bot")
	in, ok = testChannel("mention", false).inbound(group("@NanoBot hello"))
	require.True(t, ok)
	require.True(t, in.Group)
	require.Equal(t, "hello", in.Content)
	require.Equal(t, "-100", in.Route.ChatID)
	_, ok = testChannel("open", false).inbound(group("hello all"))
	require.True(t, ok, "open policy answers everything")
	_, ok = testChannel("mention", false).inbound(group("/status@NanoBot"))
	require.True(t, ok, "a command addressed to the bot")
	_, ok = testChannel("open", false).inbound(group("/status@other_bot"))
	require.False(t, ok, "a command for another bot")

	topic := group("@NanoBot in a topic")
	topic.IsTopicMessage, topic.MessageThreadID = true, 77
	in, _ = testChannel("mention", false).inbound(topic)
	require.Equal(t, "77", in.Route.ThreadID)
}
