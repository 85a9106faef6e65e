package discord

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

func TestDMIsPublished(t *testing.T) {
	h := startHarness(t, nil)
	require.Equal(t, defaultIntents, h.peer.Intents(), "nanobot's intents are asked for")
	id := h.peer.Say(discordpeer.Incoming{ChannelID: dm, Author: alice, Content: "hello there"})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "discord:"+id, got.ID)
	require.Equal(t, protocol.Route{Channel: Name, ChatID: dm, SenderID: alice.ID, ReplyTo: id}, got.Route)
	require.Equal(t, "hello there", got.Content)
	require.False(t, got.Group)
	require.Nil(t, got.Scope, "a DM has the chat's session (the manager names it)")
	require.Equal(t, id, got.Metadata[channels.MetaMessageID])
	require.Contains(t, h.Ch.Describe(), "@"+discordpeer.BotName)
}

func TestRefusedSenderIsNotTakenFurther(t *testing.T) {
	h := startHarness(t, nil)
	bob := discordpeer.User{ID: "800000000000000009", Username: "bob"}
	h.Refuse(bob.ID)
	att := h.peer.AddFile(dm, "700000000000000001", "a.png", []byte("png"))
	h.peer.Say(discordpeer.Incoming{ChannelID: dm, Author: bob, Content: "let me in",
		Attachments: []discordpeer.Attachment{{ID: "700000000000000001", Filename: "a.png", URL: att, Size: 3}}})
	h.sync()
	require.Len(t, h.Published(), 1, "only the sync message")
	entries, _ := os.ReadDir(filepath.Join(h.Workspace, "media"))
	require.Empty(t, entries, "nothing is downloaded for a refused sender")
}

func TestGuildMessageNeedsAMention(t *testing.T) {
	h := startHarness(t, nil) // groupPolicy mention, nanobot's default
	h.peer.Say(discordpeer.Incoming{ChannelID: general, GuildID: guild, Author: alice, Content: "hello everyone"})
	id := h.peer.Say(discordpeer.Incoming{ChannelID: general, GuildID: guild, Author: alice,
		Content: "<@" + discordpeer.BotID + "> what is 2+2?", Mentions: []discordpeer.User{discordpeer.Bot}})
	got := h.WaitPublished(1)[0]
	require.Equal(t, "discord:"+id, got.ID, "the message without a mention was ignored")
	require.Equal(t, "what is 2+2?", got.Content, "the mention is stripped")
	require.True(t, got.Group)
	require.Equal(t, guild, got.Metadata["guild_id"])
	require.Equal(t, general, got.Route.ChatID)

	// A reply to one of the bot's messages addresses it too; <@!id> is a mention.
	h.peer.Say(discordpeer.Incoming{ChannelID: general, GuildID: guild, Author: alice, Type: 19, Content: "and 3+3?",
		ReplyTo: "1300000000000000001", ReplyToAuthor: &discordpeer.Bot})
	h.peer.Say(discordpeer.Incoming{ChannelID: general, GuildID: guild, Author: alice, Content: "hey <@!" + discordpeer.BotID + "> there"})
	all := h.WaitPublished(3)
	require.Equal(t, "and 3+3?", all[1].Content)
	require.Equal(t, "1300000000000000001", all[1].Metadata["reply_to"])
	require.Equal(t, "hey there", all[2].Content)
}

func TestOpenPolicyTakesEveryGuildMessage(t *testing.T) {
	h := startHarness(t, map[string]any{"groupPolicy": "open"})
	h.peer.Say(discordpeer.Incoming{ChannelID: general, GuildID: guild, Author: alice, Content: "hello everyone"})
	require.Equal(t, "hello everyone", h.WaitPublished(1)[0].Content)
}

func TestIgnoredMessages(t *testing.T) {
	h := startHarness(t, map[string]any{"groupPolicy": "open", "allowChannels": []string{general, dm}})
	other := discordpeer.User{ID: "800000000000000002", Username: "helper", Bot: true}
	h.peer.Say(discordpeer.Incoming{ChannelID: dm, Author: discordpeer.Bot, Content: "my own message"})
	h.peer.Say(discordpeer.Incoming{ChannelID: general, GuildID: guild, Author: other, Content: "another bot"})
	h.peer.Say(discordpeer.Incoming{ChannelID: general, GuildID: guild, Author: alice, Content: "from a hook", WebhookID: "1"})
	h.peer.Say(discordpeer.Incoming{ChannelID: general, GuildID: guild, Author: alice, Type: 18, Content: ""})
	h.peer.GuildChannel(guild, "900000000000000011")
	h.peer.Say(discordpeer.Incoming{ChannelID: "900000000000000011", GuildID: guild, Author: alice, Content: "not an allowed channel"})
	// A thread under an allowed channel is allowed.
	h.peer.Say(discordpeer.Incoming{ChannelID: thread, GuildID: guild, Author: alice, Content: "in the thread"})
	h.sync()
	got := h.Published()
	require.Len(t, got, 2)
	require.Equal(t, "in the thread", got[0].Content)
	for _, why := range []string{skipOwn, skipBot, skipSystem, skipChannel} {
		require.Contains(t, h.Logs.String(), why)
	}
}

func TestThreadHasItsOwnSession(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(discordpeer.Incoming{ChannelID: thread, GuildID: guild, Author: alice,
		Content: "<@" + discordpeer.BotID + "> in a thread", Mentions: []discordpeer.User{discordpeer.Bot}})
	got := h.WaitPublished(1)[0]
	require.Equal(t, thread, got.Route.ChatID, "the answer goes to the thread")
	require.Equal(t, protocol.Thread(general, thread), got.Scope, "the session is the thread's, named by its parent")
	require.Equal(t, general, got.Metadata["parent_channel_id"])
	require.Zero(t, h.peer.CallsTo("GET", "/channels/"+thread), "the thread GUILD_CREATE announced is known without asking")

	// A thread the gateway never announced is looked up once over REST.
	late := "900000000000000021"
	h.peer.Thread(guild, general, late)
	for range 2 {
		h.peer.Say(discordpeer.Incoming{ChannelID: late, GuildID: guild, Author: alice,
			Content: "<@" + discordpeer.BotID + "> later", Mentions: []discordpeer.User{discordpeer.Bot}})
	}
	all := h.WaitPublished(3)
	require.Equal(t, protocol.Thread(general, late), all[2].Scope)
	require.Equal(t, 1, h.peer.CallsTo("GET", "/channels/"+late))
}

func TestRedeliveredMessageIsTakenOnce(t *testing.T) {
	h := startHarness(t, nil)
	in := discordpeer.Incoming{ID: h.peer.ID(), ChannelID: dm, Author: alice, Content: "once"}
	h.peer.Say(in)
	h.peer.Say(in)
	h.sync()
	require.Len(t, h.Published(), 2, "the message and the sync")
	require.Contains(t, h.Logs.String(), "redelivered")
}

func TestReplyReferencesTheUsersMessage(t *testing.T) {
	h := startHarness(t, nil)
	id := h.peer.Say(discordpeer.Incoming{ChannelID: dm, Author: alice, Content: "hi"})
	msg := h.WaitPublished(1)[0]
	r := reply(dm, msg.Route.ReplyTo, "t1", "Hello, **Alice**.")
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	msgs := h.peer.Messages(dm)
	require.Len(t, msgs, 1)
	require.Equal(t, "Hello, **Alice**.", msgs[0].Content)
	require.Equal(t, id, msgs[0].ReplyTo)
	require.Contains(t, string(h.peer.Calls()[len(h.peer.Calls())-1].Body), `"replied_user":false`)
}

// TestReplyIsDiscordsMarkdown: what reaches Discord is Discord's Markdown
// (markdown.Discord): __ is underline there, so bold is **; a link whose
// URL has parentheses is wrapped in <>; code keeps its backticks; a deep
// heading is bold; a table is aligned text in a code block.
func TestReplyIsDiscordsMarkdown(t *testing.T) {
	h := startHarness(t, nil)
	md := "__Bold__, [the docs](https://example.com/a_(b)), ``x`y``\n\n#### Deep\n\n| k | v |\n|---|---|\n| a | 1 |"
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(dm, "", "t1", md)))
	msgs := h.peer.Messages(dm)
	require.Len(t, msgs, 1)
	require.Equal(t, "**Bold**, [the docs](<https://example.com/a_(b)>), ``x`y``\n\n**Deep**\n\n```\nk  v\n─  ─\na  1\n```", msgs[0].Content)
}

func TestLongReplyIsSplitInThree(t *testing.T) {
	h := startHarness(t, nil)
	var paras []string
	for i := range 45 {
		paras = append(paras, strings.Repeat(string(rune('a'+i%26)), 99))
	}
	text := strings.Join(paras, "\n\n") // 45×99 + 44×2 = 4543 characters
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, reply(dm, "1300000000000000009", "t1", text)))
	msgs := h.peer.Messages(dm)
	require.Len(t, msgs, 3)
	var joined []string
	for i, m := range msgs {
		require.LessOrEqual(t, utf8.RuneCountInString(m.Content), maxMessageRunes)
		if i == 0 {
			require.Equal(t, "1300000000000000009", m.ReplyTo, "the first part answers the user's message")
		} else {
			require.Empty(t, m.ReplyTo)
		}
		joined = append(joined, m.Content)
	}
	require.Equal(t, text, strings.Join(joined, "\n\n"))
}

func TestTypingAndReactions(t *testing.T) {
	h := startHarness(t, map[string]any{"workingEmoji": "🔧", "workingEmojiDelay": 0.05})
	route := protocol.Route{Channel: Name, ChatID: dm}
	require.NoError(t, h.Ch.SendTyping(context.Background(), route))
	require.Equal(t, 1, h.peer.CallsTo("POST", "/channels/"+dm+"/typing"))

	require.Equal(t, "👀", h.Ch.AckEmoji(), "nanobot's readReceiptEmoji")
	msgID := "1300000000000000002"
	require.NoError(t, h.Ch.React(context.Background(), route, msgID, "👀"))
	require.Eventually(t, func() bool { return len(h.peer.Reactions(msgID)) == 2 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, h.Ch.Unreact(context.Background(), route, msgID, "👀"))
	// When Unreact lands while the working emoji's POST is still in flight,
	// the emoji comes off from that POST's goroutine, after Unreact returns.
	require.Eventually(t, func() bool { return len(h.peer.Reactions(msgID)) == 4 }, 5*time.Second, 10*time.Millisecond)
	require.ElementsMatch(t, []string{"+👀", "+🔧", "-👀", "-🔧"}, h.peer.Reactions(msgID))
}

// TestWorkingEmojiInFlightWhenTheAnswerComes: the answer's Unreact lands
// while the working emoji's PUT is unanswered; the emoji comes off once it is on.
// (discordgo queues the DELETE behind the PUT: one rate-limit bucket.)
func TestWorkingEmojiInFlightWhenTheAnswerComes(t *testing.T) {
	h := startHarness(t, map[string]any{"workingEmoji": "🔧", "workingEmojiDelay": 0.01})
	route := protocol.Route{Channel: Name, ChatID: dm}
	msgID := "1300000000000000003"
	held := h.peer.HoldReaction("🔧")
	require.NoError(t, h.Ch.React(context.Background(), route, msgID, "👀"))
	<-held
	unreacted := make(chan error, 1)
	go func() { unreacted <- h.Ch.Unreact(context.Background(), route, msgID, "👀") }()
	require.Eventually(t, func() bool {
		h.Ch.working.mu.Lock()
		defer h.Ch.working.mu.Unlock()
		return len(h.Ch.working.pending) == 0
	}, 5*time.Second, time.Millisecond, "the answer forgets the pending working emoji")
	h.peer.Release()
	require.NoError(t, <-unreacted)
	require.Eventually(t, func() bool { return len(h.peer.Reactions(msgID)) == 4 }, 5*time.Second, 10*time.Millisecond)
	require.ElementsMatch(t, []string{"+👀", "+🔧", "-👀", "-🔧"}, h.peer.Reactions(msgID))
}

func TestAttachmentInIsDownloaded(t *testing.T) {
	h := startHarness(t, nil)
	png := []byte("\x89PNG\r\n\x1a\nnot really")
	// Not Discord's CDN (nor apiBase): never fetched.
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("evil")) }))
	defer elsewhere.Close()
	url := h.peer.AddFile(dm, "700000000000000002", "cat.png", png)
	h.peer.Say(discordpeer.Incoming{ChannelID: dm, Author: alice, Content: "see this",
		Attachments: []discordpeer.Attachment{
			{ID: "700000000000000002", Filename: "cat.png", ContentType: "image/png", Size: len(png), URL: url},
			{ID: "700000000000000003", Filename: "huge.bin", Size: 50 << 20, URL: url},
			{ID: "700000000000000004", Filename: "gone.txt", Size: 4, URL: h.peer.URL() + "/attachments/nope"},
			{ID: "700000000000000005", Filename: "evil.txt", Size: 4, URL: elsewhere.URL + "/x"},
		}})
	got := h.WaitPublished(1)[0]
	want := filepath.Join(h.Workspace, "media", "discord-700000000000000002-cat.png")
	require.Equal(t, []string{want}, got.Media)
	data, err := os.ReadFile(want)
	require.NoError(t, err)
	require.Equal(t, png, data)
	require.Equal(t, "see this\n[attachment: huge.bin - too large]\n[attachment: gone.txt - download failed]\n[attachment: evil.txt - download failed]", got.Content)
}

func TestFilesOut(t *testing.T) {
	h := startHarness(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(h.Workspace, "report.txt"), []byte("the report"), 0o644))
	r := reply(dm, "1300000000000000003", "t1", "Here it is.")
	r.Media = []string{"report.txt", "https://example.com/chart.png", "missing.pdf"}
	require.NoError(t, channels.Deliver(context.Background(), h.Ch, r))
	msgs := h.peer.Messages(dm)
	require.Len(t, msgs, 4)
	require.Len(t, msgs[0].Files, 1)
	require.Equal(t, "report.txt", msgs[0].Files[0].Name)
	require.Equal(t, "the report", string(msgs[0].Files[0].Data))
	require.Equal(t, "1300000000000000003", msgs[0].ReplyTo, "the first part answers the user's message")
	require.Equal(t, "https://example.com/chart.png", msgs[1].Content, "a URL is posted as a link")
	require.Equal(t, "[attachment: missing.pdf - send failed]", msgs[2].Content)
	require.Equal(t, "Here it is.", msgs[3].Content)
}
