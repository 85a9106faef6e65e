package telegram

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

var request = protocol.ApprovalRequest{ID: "1a2b", Tool: "exec", Args: "rm -rf build", Reason: "a risky command", Key: "exec rm", Timeout: time.Hour}

// TestApprovalRequestHasAnInlineKeyboard: the request's text goes out with
// one row of buttons whose callback_data are the commands; a plain reply has none.
func TestApprovalRequestHasAnInlineKeyboard(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, nil)
	r := channels.Reply{Route: dm, Turn: "turn-1", Kind: protocol.ReplyApproval, Approval: &request, Text: request.Text()}
	require.NoError(t, channels.Deliver(context.Background(), c, r))
	require.NoError(t, channels.Deliver(context.Background(), c, channels.Reply{Route: dm, Turn: "turn-2", Text: "plain"}))
	sent := f.sent("sendMessage")
	require.Len(t, sent, 2)
	require.Contains(t, sent[0].Form["text"], "Approval needed [1a2b]: exec rm -rf build")
	require.JSONEq(t, `{"inline_keyboard":[[{"text":"Approve","callback_data":"/approve 1a2b"},`+
		`{"text":"Deny","callback_data":"/deny 1a2b"},{"text":"Always this command","callback_data":"/approve 1a2b always"}]]}`,
		sent[0].Form["reply_markup"], "callback buttons and nothing else")
	require.Empty(t, sent[1].Form["reply_markup"], "a plain reply has no keyboard")
}

func press(updateID int64, queryID string, from *models.User, chat models.Chat, msgID int, data string) *models.Update {
	return &models.Update{ID: updateID, CallbackQuery: &models.CallbackQuery{
		ID: queryID, From: *from, Data: data,
		Message: models.MaybeInaccessibleMessage{Message: &models.Message{ID: msgID, Chat: chat, Date: 1}},
	}}
}

// TestPressBecomesThePressersMessage: a press is the presser's message with
// the command's text in the request's chat — the same session as a typed
// one — the query is answered, the keyboard taken off, and the same update
// again (a restart, a server ignoring offset) is not published twice.
func TestPressBecomesThePressersMessage(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, func(cfg *config.Config) { editBlock(t, cfg, func(b *Config) { b.AllowFrom = []string{"alice"} }) })
	p := &capture{}
	c.Attach(p.via(t, c))
	private := models.Chat{ID: 42, Type: models.ChatTypePrivate}

	c.onUpdate(context.Background(), nil, &models.Update{ID: 1, Message: &models.Message{ID: 5, From: alice, Chat: private, Text: "/approve 1a2b"}})
	c.onUpdate(context.Background(), nil, press(2, "cq-1", alice, private, 101, "/approve 1a2b always"))
	c.onUpdate(context.Background(), nil, press(2, "cq-1", alice, private, 101, "/approve 1a2b always"))
	got := p.got()
	require.Len(t, got, 2, "the typed message and the press, once")
	typed, pressed := got[0], got[1]
	require.Equal(t, "/approve 1a2b always", pressed.Content)
	require.Equal(t, "42|alice", pressed.Route.SenderID)
	require.Equal(t, "42", pressed.Route.ChatID)
	require.Equal(t, typed.SessionKey, pressed.SessionKey, "the session a typed answer goes to")
	require.False(t, pressed.Group)
	require.NotEqual(t, typed.ID, pressed.ID)

	answers := f.sent("answerCallbackQuery")
	require.Len(t, answers, 1)
	require.Equal(t, "cq-1", answers[0].Form["callback_query_id"])
	require.Empty(t, answers[0].Form["text"])
	edits := f.sent("editMessageReplyMarkup")
	require.Len(t, edits, 1, "the keyboard is taken off the answered request")
	require.Equal(t, "101", edits[0].Form["message_id"])
	require.JSONEq(t, `{"inline_keyboard":[]}`, edits[0].Form["reply_markup"])
}

// TestStrangersPressIsRefused: in a group, a press by someone not allowed
// is refused by the manager like a typed message: nothing reaches the
// agent, the presser is told, and the keyboard stays.
func TestStrangersPressIsRefused(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, func(cfg *config.Config) { editBlock(t, cfg, func(b *Config) { b.AllowFrom = []string{"alice"} }) })
	p := &capture{}
	c.Attach(p.via(t, c))
	group := models.Chat{ID: -77, Type: models.ChatTypeSupergroup}
	mallory := &models.User{ID: 666, Username: "mallory"}

	c.onUpdate(context.Background(), nil, press(3, "cq-2", mallory, group, 102, "/approve 1a2b"))
	c.onUpdate(context.Background(), nil, &models.Update{ID: 4, Message: &models.Message{ID: 6, From: mallory, Chat: group, Text: "/approve 1a2b"}})
	require.Empty(t, p.got(), "neither the press nor the typed command gets in")
	answers := f.sent("answerCallbackQuery")
	require.Len(t, answers, 1)
	require.Equal(t, pressRefusedText, answers[0].Form["text"])
	require.Empty(t, f.sent("editMessageReplyMarkup"), "the keyboard stays for someone allowed")
	require.Empty(t, f.sent("sendMessage"), "no pairing code in a group")

	// A button that is not an approval answer is not a message at all.
	c.onUpdate(context.Background(), nil, press(5, "cq-3", alice, group, 103, "/new"))
	require.Empty(t, p.got())
	require.Len(t, f.sent("answerCallbackQuery"), 2, "its spinner is stopped all the same")
}

// TestBadPressesAreAnsweredAndDropped: presses without a message, a chat,
// a sender or an approval payload reach nobody and stop their spinner.
func TestBadPressesAreAnsweredAndDropped(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, nil)
	p := &capture{}
	c.Attach(p.via(t, c))
	for i, raw := range []string{
		`{"update_id":1,"callback_query":{"id":"q1"}}`,
		`{"update_id":2,"callback_query":{"id":"q2","from":{"id":42},"data":"/approve 1a2b"}}`,
		`{"update_id":3,"callback_query":{"id":"q3","from":{"id":42},"message":{"message_id":1,"date":1,"chat":{"id":0}},"data":"/approve 1a2b"}}`,
		`{"update_id":4,"callback_query":{"id":"q4","message":{"message_id":1,"date":1,"chat":{"id":42,"type":"private"}},"data":"/approve 1a2b"}}`,
		`{"update_id":5,"callback_query":{"id":"q5","from":{"id":42},"message":{"message_id":1,"date":1,"chat":{"id":42,"type":"private"}},"data":"/approve ` + strings.Repeat("a", 80) + `"}}`,
	} {
		var upd models.Update
		require.NoError(t, json.Unmarshal([]byte(raw), &upd), "case %d", i)
		c.onUpdate(context.Background(), nil, &upd)
	}
	require.Empty(t, p.got())
	require.Len(t, f.sent("answerCallbackQuery"), 5)
	require.Empty(t, f.sent("editMessageReplyMarkup"))
}

// TestTopicHasItsOwnSession: a message in a forum topic, and a press on a
// request shown there, land in the topic's session, as in nanobot.
func TestTopicHasItsOwnSession(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, func(cfg *config.Config) {
		editBlock(t, cfg, func(b *Config) { b.AllowFrom, b.GroupPolicy = []string{"alice"}, "open" })
	})
	p := &capture{}
	c.Attach(p.via(t, c))
	forum := models.Chat{ID: -100, Type: models.ChatTypeSupergroup, IsForum: true}
	c.onUpdate(context.Background(), nil, &models.Update{ID: 1, Message: &models.Message{ID: 5, From: alice, Chat: forum, Text: "hi",
		IsTopicMessage: true, MessageThreadID: 77}})
	pressed := press(2, "cq-1", alice, forum, 101, "/approve 1a2b")
	pressed.CallbackQuery.Message.Message.IsTopicMessage, pressed.CallbackQuery.Message.Message.MessageThreadID = true, 77
	c.onUpdate(context.Background(), nil, pressed)
	c.onUpdate(context.Background(), nil, &models.Update{ID: 3, Message: &models.Message{ID: 6, From: alice, Chat: forum, Text: "general"}})
	got := p.got()
	require.Len(t, got, 3)
	require.Equal(t, "telegram:-100:topic:77", got[0].SessionKey)
	require.Equal(t, "telegram:-100:topic:77", got[1].SessionKey, "the press answers the topic that asked")
	require.Equal(t, "telegram:-100", got[2].SessionKey, "outside a topic: the chat's session")
}
