package channels

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/secrets"
	"github.com/nanobot-durable/nanobot/session"
)

// Reply is a message on its way to a chat: a turn's answer, a command's
// reply, or a message tool send.
type Reply struct {
	// ID names this delivery: a retried delivery has the same ID, two
	// deliveries of one turn (an answer before injected messages, a goal's
	// rounds) differ. Channels dedupe retries by it.
	ID         string
	Route      protocol.Route
	SessionKey string
	Turn       string
	MessageIDs []string
	Text       string
	// Media are files to attach (workspace paths or http(s) URLs).
	Media      []string
	StopReason string
	Kind       protocol.ReplyKind
	// Approval is the request a ReplyApproval asks about: a channel with
	// buttons draws Approve / Deny / Always under Text (which names the commands).
	Approval *protocol.ApprovalRequest
	// Drawn is the message a gateway streamed the answer into, when that
	// may have been another process: the answer edits it instead of posting.
	Drawn string
}

// Answer reports whether the reply is a turn's answer: it ends the turn's
// stream, typing and reactions in the chat.
func (r Reply) Answer() bool { return r.Kind == protocol.ReplyAnswer }

// EndsTurn reports whether the chat's turn is over once the reply is
// shown: a message tool send or an approval request leaves it going on,
// an answer or the gateway's own word (/stop) does not.
func (r Reply) EndsTurn() bool {
	return r.Kind != protocol.ReplyMessage && r.Kind != protocol.ReplyApproval
}

// Answered are the platform ids of the chat's messages a turn-ending
// reply answers (nanobot's doneEmoji goes on them): those of MessageIDs
// that are channel's own ("<channel>:<id>"); none while the turn goes on.
func (r Reply) Answered(channel string) []string {
	if !r.EndsTurn() {
		return nil
	}
	var ids []string
	for _, id := range r.MessageIDs {
		if own, ok := strings.CutPrefix(id, channel+":"); ok && own != "" {
			ids = append(ids, own)
		}
	}
	return ids
}

// Key names one delivery to one chat (thread), for telling a retried
// delivery from a new one; "" for replies that are never retried (a
// pairing code, a greeting).
func (r Reply) Key() string {
	id := r.ID
	if id == "" {
		id = r.Turn
	}
	if id == "" {
		return ""
	}
	return id + "\x00" + r.Route.ChatID + "\x00" + r.Route.ThreadID
}

// Publish hands an inbound message to the agent. Channels call it for every
// message they receive; the manager admits it (see Manager.Admit) before a
// workflow is touched, then runs admitted (may be nil) and publishes.
type Publish func(ctx context.Context, msg protocol.Inbound, admitted Admitted) error

// Channel is a chat connection owned by this process. It shows replies as
// a PartSender (most platforms: the kit splits, skips and records parts)
// or as a Sender (a whole reply at once); Deliver picks the way.
type Channel interface {
	Name() string
	// Start connects and begins receiving; it returns once the channel runs
	// (its receive loop goes on until ctx ends or Stop is called).
	Start(ctx context.Context, publish Publish) error
	// Stop disconnects; messages in flight are finished or dropped, never half-sent.
	Stop(ctx context.Context) error
}

// Sender is a channel that shows a whole reply at once.
type Sender interface {
	Channel
	// Send shows a reply in the chat. Delivery is retried, so it must be
	// safe to call again with the same reply.
	Send(ctx context.Context, r Reply) error
}

// Deliver shows a reply through c: part by part for a PartSender, whole
// for a Sender.
func Deliver(ctx context.Context, c Channel, r Reply) error {
	return deliver(ctx, c, r, nil)
}

func deliver(ctx context.Context, c Channel, r Reply, streamed func() (id, shown string)) error {
	switch c := c.(type) {
	case PartSender:
		return sendParts(ctx, c, r, streamed)
	case Sender:
		return c.Send(ctx, r)
	}
	return fmt.Errorf("channel %q can send no reply (neither a Sender nor a PartSender)", c.Name())
}

// Streamer is a channel that draws replies as they are generated.
type Streamer interface {
	// SendDelta draws one stream event (a delta, a reset, a tool hint, the
	// end of a model call). It must be quick: the model activity waits.
	SendDelta(ctx context.Context, ev StreamEvent)
}

// SendError tells delivery how to treat a failed send: wait RetryAfter
// before the next attempt (Telegram's 429), or give up (Permanent: chat
// not found, bot blocked). Other errors are retried with backoff.
type SendError struct {
	Err        error
	RetryAfter time.Duration
	Permanent  bool
}

func (e *SendError) Error() string { return e.Err.Error() }
func (e *SendError) Unwrap() error { return e.Err }

// Deps is what a gateway gives the channels it builds.
type Deps struct {
	Config *config.Config
	// Workspace is where downloaded media go (<workspace>/media).
	Workspace string
	// ProcessQueue is this process's own delivery queue, for channels whose
	// replies only this process can hand over (an HTTP request waiting).
	ProcessQueue string
	// Pairing is the one pairing store of the process (nil: allowFrom only).
	Pairing *pairing.Store
	// Sessions is the process's session journal, for channels that read it
	// (the web chat's history); nil: they open the home's files.
	Sessions session.Store
	// Home is the nanobot home (~/.nanobot): device sessions and channel state.
	Home string
	// Secrets masks tokens in log lines; a channel adds the ones it fetches
	// at run time (an access token) before it logs anything carrying them.
	Secrets *secrets.Set
	// Shared is a listener of the process (the health endpoints' on
	// gateway.port): a channel configured for the same address serves there.
	Shared *SharedHTTP
	// Seen opens the dedupe set named set (its newest n keys) that every
	// gateway on the process's database shares; nil: a channel keeps its own.
	Seen func(set string, n int) SeenKeys
	// State opens the state store of a channel (sync and context tokens)
	// that every gateway on the process's database shares; nil: the files.
	State func(channel string) StateStore
	Log   *slog.Logger
}

// SentAt is when a platform says a message was sent (an RFC 3339 time),
// or now when it says nothing readable.
func SentAt(ts string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return time.Now()
	}
	return t
}
