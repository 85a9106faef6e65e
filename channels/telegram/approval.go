package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Texts a presser sees in Telegram's little toast over the chat.
const (
	pressRefusedText = "Only someone allowed in this chat can answer."
	pressFailedText  = "The agent could not take the answer yet; it is retried."
)

// inlineKeyboard is Telegram's InlineKeyboardMarkup with callback buttons
// only: the library's button type always sends an empty copy_text, and a
// button may carry one action alone.
type inlineKeyboard struct {
	InlineKeyboard [][]inlineButton `json:"inline_keyboard"`
}

type inlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

// keyboard is the inline keyboard of an approval request (nil when the
// reply has no buttons): one row, each button's callback_data the command
// a press sends.
func keyboard(buttons []channels.ApprovalButton) models.ReplyMarkup {
	if len(buttons) == 0 {
		return nil
	}
	row := make([]inlineButton, 0, len(buttons))
	for _, b := range buttons {
		if !channels.IsApprovalPress(b.Command) {
			return nil // callback_data over Telegram's 64 bytes: the text still names the commands
		}
		row = append(row, inlineButton{Text: b.Label, CallbackData: b.Command})
	}
	return &inlineKeyboard{InlineKeyboard: [][]inlineButton{row}}
}

// onPress turns a press of an approval button into the presser's message in
// the chat the request was shown in, through the manager's gate like a
// typed one. The query is answered so the button stops spinning; once the
// answer reached the agent the keyboard is taken off the request.
func (c *Channel) onPress(ctx context.Context, q *models.CallbackQuery) {
	if c.bot == nil {
		return // not connected: nobody to answer the query
	}
	chatID, msgID, chatType, ok := pressedMessage(q)
	if !ok || !channels.IsApprovalPress(q.Data) || q.From.ID == 0 {
		c.Log.Warn("telegram button press ignored: not an approval button of a message", "data", q.Data, "from", q.From.ID)
		c.answerPress(q.ID, "")
		return
	}
	in := protocol.Inbound{
		ID:      fmt.Sprintf("telegram-%d-press-%s", chatID, q.ID),
		Route:   protocol.Route{Channel: Name, ChatID: strconv.FormatInt(chatID, 10), SenderID: SenderID(&q.From)},
		Content: q.Data,
		Group:   chatType == models.ChatTypeGroup || chatType == models.ChatTypeSupergroup,
		Metadata: map[string]string{
			"request_message_id": strconv.Itoa(msgID), "username": q.From.Username, "first_name": q.From.FirstName, "button": "approval",
		},
	}
	if m := q.Message.Message; m != nil && m.IsTopicMessage && m.MessageThreadID != 0 {
		in.Route.ThreadID = strconv.Itoa(m.MessageThreadID)
	}
	in.Scope = topicScope(in.Route) // the topic's session asked, as a typed answer there
	if c.cfg.ReplyToMessage {
		in.Route.ReplyTo = strconv.Itoa(msgID)
	}
	err := c.Publish(ctx, in, nil)
	switch {
	case err == nil:
		c.answerPress(q.ID, "")
	case errors.Is(err, channels.ErrRefused):
		c.answerPress(q.ID, pressRefusedText)
		return // the keyboard stays for someone who may answer
	default:
		c.answerPress(q.ID, pressFailedText) // Telegram wants the answer within seconds
		if err = c.TakeInPatiently(ctx, "", in, nil, channels.PublishPatience); !channels.Handed(err) {
			return // TakeIn logged it
		}
	}
	c.clearKeyboard(in.Route.ChatID, msgID)
}

// pressedMessage is the chat and message a button was pressed under.
func pressedMessage(q *models.CallbackQuery) (chatID int64, msgID int, chatType models.ChatType, ok bool) {
	switch {
	case q.Message.Message != nil:
		m := q.Message.Message
		return m.Chat.ID, m.ID, m.Chat.Type, m.Chat.ID != 0
	case q.Message.InaccessibleMessage != nil: // older than 48 h: the chat is still known
		m := q.Message.InaccessibleMessage
		return m.Chat.ID, m.MessageID, m.Chat.Type, m.Chat.ID != 0
	}
	return 0, 0, "", false
}

// answerPress stops the button's spinner, with a short text when one is given.
func (c *Channel) answerPress(id, text string) {
	if id == "" {
		return
	}
	ctx, cancel := c.Call(callTimeout)
	defer cancel()
	if _, err := c.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text}); err != nil {
		c.warnOnce("answerCallbackQuery", err)
	}
}

// clearKeyboard takes the buttons off an answered request, best effort:
// a later press would only be told the request was already answered.
func (c *Channel) clearKeyboard(chatID string, msgID int) {
	ctx, cancel := c.Call(callTimeout)
	defer cancel()
	_, err := c.bot.EditMessageReplyMarkup(ctx, &bot.EditMessageReplyMarkupParams{
		ChatID: chatID, MessageID: msgID, ReplyMarkup: &inlineKeyboard{InlineKeyboard: [][]inlineButton{}},
	})
	if err != nil && !isNotModified(err) {
		c.warnOnce("editMessageReplyMarkup", err)
	}
}
