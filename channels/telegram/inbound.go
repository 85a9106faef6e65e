package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/nanobot-durable/nanobot/atomicfile"
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// startText is nanobot's /start greeting.
const startText = "👋 Hi %s! I'm nanobot.\n\nSend me a message and I'll respond!\nType /help to see available commands."

// onUpdate handles one update from getUpdates.
func (c *Channel) onUpdate(ctx context.Context, _ *bot.Bot, upd *models.Update) {
	if upd == nil || c.seen.Has(upd.ID) {
		return // a server that ignores offset, or a restart, sends updates again
	}
	defer c.seen.Add(upd.ID) // once handled: a restart does not hand it to the agent again
	c.handle(ctx, upd)
}

func (c *Channel) handle(ctx context.Context, upd *models.Update) {
	msg := upd.Message
	if msg == nil || msg.From == nil || (c.me != nil && msg.From.ID == c.me.ID) {
		return
	}
	in, ok := c.inbound(msg)
	if !ok {
		return
	}
	admitted := c.admitted(in.Route.SenderID)
	name, _, isCmd := protocol.ParseCommand(in.Content)
	if isCmd && name == "/start" && admitted {
		c.greet(ctx, in, msg.From)
		return
	}
	if admitted {
		in.Media = c.downloadMedia(ctx, msg)
		in.Content = withMediaNote(in.Content, msg, len(in.Media) > 0)
	} else if att, ok := attachmentOf(msg); ok && in.Content == "" {
		in.Content = "[" + att.kind + "]" // still a message: a stranger gets the pairing code
	}
	if strings.TrimSpace(in.Content) == "" && len(in.Media) == 0 {
		return // a sticker, a poll, a service message: nothing to answer
	}
	// Typing starts before the message is handed over, so even a reply that
	// comes back at once (a command) finds it to stop.
	waits := admitted && !(isCmd && name == "/stop")
	if waits {
		c.startTyping(in.Route, msg.ID)
	}
	err := c.publishRetrying(ctx, in)
	if err != nil && waits {
		c.stopTyping(in.Route)
	}
	switch {
	case errors.Is(err, channels.ErrRefused):
		// the manager logged it and, in a DM, offered pairing
	case err != nil:
		c.log.Error("telegram message not delivered to the agent", "chat", in.Route.ChatID, "sender", in.Route.SenderID, "error", err)
	}
}

// publishRetrying hands the message over, retrying while the agent cannot
// take it (Temporal restarting): Telegram will not send it again.
func (c *Channel) publishRetrying(ctx context.Context, in protocol.Inbound) error {
	wait := time.Second
	deadline := time.Now().Add(publishPatience)
	for {
		err := c.publish(ctx, in)
		if err == nil || errors.Is(err, channels.ErrRefused) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		c.log.Warn("the agent did not take a telegram message; retrying", "chat", in.Route.ChatID, "in", wait, "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// publishPatience bounds how long one message is retried before it is given up (and logged).
const publishPatience = 10 * time.Minute

// inbound builds the agent's message from a Telegram message, or reports
// that the message is not for the bot (a group message that does not
// mention it, a command for another bot).
func (c *Channel) inbound(msg *models.Message) (protocol.Inbound, bool) {
	group := msg.Chat.Type == models.ChatTypeGroup || msg.Chat.Type == models.ChatTypeSupergroup
	text := msg.Text
	if text == "" {
		text = msg.Caption
	}
	username := ""
	if c.me != nil {
		username = c.me.Username
	}
	if to := commandTarget(text); to != "" && !strings.EqualFold(to, username) {
		return protocol.Inbound{}, false // /cmd@otherbot
	}
	_, _, isCmd := protocol.ParseCommand(text)
	if group && c.cfg.GroupPolicy != "open" && !isCmd && !mentioned(msg, c.me) {
		return protocol.Inbound{}, false
	}
	route := protocol.Route{
		Channel:  Name,
		ChatID:   strconv.FormatInt(msg.Chat.ID, 10),
		SenderID: SenderID(msg.From),
	}
	if msg.IsTopicMessage && msg.MessageThreadID != 0 {
		route.ThreadID = strconv.Itoa(msg.MessageThreadID)
	}
	if c.cfg.ReplyToMessage {
		route.ReplyTo = strconv.Itoa(msg.ID)
	}
	sent := time.Now()
	if msg.Date > 0 {
		sent = time.Unix(int64(msg.Date), 0)
	}
	return protocol.Inbound{
		ID:      fmt.Sprintf("telegram-%d-%d", msg.Chat.ID, msg.ID),
		Route:   route,
		Content: StripMention(text, username),
		Group:   group,
		SentAt:  sent,
		Metadata: map[string]string{
			"message_id": strconv.Itoa(msg.ID),
			"username":   msg.From.Username,
			"first_name": msg.From.FirstName,
		},
	}, true
}

// SenderID is how nanobot names a Telegram sender: "id|username", or the
// id alone for users without a username.
func SenderID(u *models.User) string {
	if u == nil {
		return ""
	}
	id := strconv.FormatInt(u.ID, 10)
	if u.Username != "" {
		return id + "|" + u.Username
	}
	return id
}

// mentioned reports whether a group message is addressed to the bot: an
// @mention of its username, a text mention of its user, or a reply to one
// of its messages.
func mentioned(msg *models.Message, me *models.User) bool {
	if me == nil {
		return false
	}
	if r := msg.ReplyToMessage; r != nil && r.From != nil && r.From.ID == me.ID {
		return true
	}
	entities := msg.Entities
	text := msg.Text
	if text == "" {
		entities, text = msg.CaptionEntities, msg.Caption
	}
	for _, e := range entities {
		if e.Type == models.MessageEntityTypeTextMention && e.User != nil && e.User.ID == me.ID {
			return true
		}
	}
	return me.Username != "" && mentionRe(me.Username).MatchString(text)
}

var mentionRes sync.Map // username → *regexp.Regexp

// mentionRe matches @username as a whole word, in any case.
func mentionRe(username string) *regexp.Regexp {
	if re, ok := mentionRes.Load(username); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(`(?i)(^|[^\w/])@` + regexp.QuoteMeta(username) + `\b`)
	mentionRes.Store(username, re)
	return re
}

// StripMention removes @username from a message's text, so the model reads
// what was said to it ("@bot what's up" → "what's up").
func StripMention(text, username string) string {
	if username == "" {
		return strings.TrimSpace(text)
	}
	re := mentionRe(username)
	if !re.MatchString(text) {
		return strings.TrimSpace(text)
	}
	out := re.ReplaceAllString(text, "$1")
	return strings.TrimSpace(spaceRun.ReplaceAllString(out, " ")) // close the gap the mention left
}

var spaceRun = regexp.MustCompile(`[ \t]{2,}`)

// commandTarget is the bot a command names ("/help@nanobot" → "nanobot").
func commandTarget(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return ""
	}
	head, _, _ := strings.Cut(t, " ")
	head, _, _ = strings.Cut(head, "\n")
	_, to, _ := strings.Cut(head, "@")
	return to
}

// admitted tells whether the manager will let the sender in (allowFrom or
// an approved pairing), so the channel neither greets nor downloads files
// for strangers.
func (c *Channel) admitted(sender string) bool {
	if c.IsAllowed(sender) {
		return true
	}
	if c.pairing == nil || sender == "" {
		return false
	}
	ok, err := c.pairing.IsApproved(Name, sender)
	if err != nil {
		c.log.Warn("telegram could not read the pairing store", "error", err)
	}
	return ok
}

// greet answers /start without the model.
func (c *Channel) greet(ctx context.Context, in protocol.Inbound, from *models.User) {
	name := from.FirstName
	if name == "" {
		name = from.Username
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := c.sendText(cctx, in.Route, fmt.Sprintf(startText, name), false); err != nil {
		c.log.Warn("telegram /start greeting not sent", "chat", in.Route.ChatID, "error", err)
	}
}

// recentIDs remembers the last n update IDs. Telegram's IDs usually grow,
// but after a week without updates the next one is random, so a high-water
// mark would drop real updates: remember the IDs themselves.
type recentIDs struct {
	mu    sync.Mutex
	n     int
	order []int64
	set   map[int64]bool
	// path keeps the set across restarts ("" = memory only).
	path string
	log  *slog.Logger
}

func newRecentIDs(n int) *recentIDs { return &recentIDs{n: n, set: map[int64]bool{}} }

// loadRecentIDs is a set kept in path: updates handled before a restart
// stay handled. An unreadable file starts an empty set (and says so).
func loadRecentIDs(n int, path string, log *slog.Logger) *recentIDs {
	r := newRecentIDs(n)
	r.path, r.log = path, log
	data, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) && log != nil {
			log.Warn("cannot read handled telegram updates; starting afresh", "path", path, "error", err)
		}
		return r
	}
	var ids []int64
	if err := json.Unmarshal(data, &ids); err != nil {
		if log != nil {
			log.Warn("handled telegram updates file is broken; starting afresh", "path", path, "error", err)
		}
		return r
	}
	for _, id := range ids {
		r.add(id)
	}
	return r
}

// Has reports whether id was handled.
func (r *recentIDs) Has(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.set[id]
}

// Add records id, saves the set, and reports whether id was new.
func (r *recentIDs) Add(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.add(id) {
		return false
	}
	if r.path != "" {
		data, _ := json.Marshal(r.order)
		err := os.MkdirAll(filepath.Dir(r.path), 0o700)
		if err == nil {
			err = atomicfile.Write(r.path, data, 0o600)
		}
		if err != nil && r.log != nil {
			r.log.Warn("cannot save handled telegram updates", "path", r.path, "error", err)
		}
	}
	return true
}

func (r *recentIDs) add(id int64) bool {
	if r.set[id] {
		return false
	}
	r.set[id] = true
	r.order = append(r.order, id)
	if len(r.order) > r.n {
		delete(r.set, r.order[0])
		r.order = r.order[1:]
	}
	return true
}
