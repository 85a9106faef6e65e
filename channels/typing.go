package channels

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Typing indicators expire on every platform after a few seconds, so the
// manager renews them while a turn runs, up to a bound in case no answer
// ever comes here (delivered by another gateway, or lost).
const (
	typingEvery = 4 * time.Second
	typingBound = 5 * time.Minute
	// platformCall bounds one best-effort call (typing, a reaction).
	platformCall = 15 * time.Second
)

// MetaMessageID is the Inbound metadata key holding the platform's id of
// the user's message (reactions and replies point at it).
const MetaMessageID = "message_id"

// indicators are the "typing…" loops and acknowledgement reactions the
// manager keeps for the chats whose turns are running.
type indicators struct {
	mu      sync.Mutex
	running map[string]*indicator // by channel, chat and thread
	warned  sync.Map              // channel+call → logged once
}

type indicator struct {
	stop    context.CancelFunc
	done    chan struct{}
	reacted string // the message id the ack reaction is on
}

func chatOf(r protocol.Route) string { return r.Channel + "\x00" + r.ChatID + "\x00" + r.ThreadID }

// start shows the channel's indicators for a message just admitted:
// typing (renewed) and the ack reaction, both best effort.
func (ind *indicators) start(ctx context.Context, c Channel, msg protocol.Inbound, log *slog.Logger) {
	typer, types := c.(Typer)
	reactor, reacts := c.(Reactor)
	msgID := msg.Metadata[MetaMessageID]
	emoji := ""
	if reacts && msgID != "" {
		emoji = reactor.AckEmoji()
	}
	if !types && emoji == "" {
		return
	}
	ind.stop(ctx, c, msg.Route, log) // one indicator per chat: the newest message's
	run, cancel := context.WithTimeout(context.WithoutCancel(ctx), typingBound)
	it := &indicator{stop: cancel, done: make(chan struct{})}
	if emoji != "" {
		it.reacted = msgID
	}
	ind.mu.Lock()
	if ind.running == nil {
		ind.running = map[string]*indicator{}
	}
	ind.running[chatOf(msg.Route)] = it
	ind.mu.Unlock()
	go func() {
		defer close(it.done)
		defer cancel()
		if emoji != "" {
			ind.call(run, c, "react", log, func(ctx context.Context) error { return reactor.React(ctx, msg.Route, msgID, emoji) })
		}
		if !types {
			return
		}
		tick := time.NewTicker(typingEvery)
		defer tick.Stop()
		for {
			if !ind.call(run, c, "typing", log, func(ctx context.Context) error { return typer.SendTyping(ctx, msg.Route) }) {
				return
			}
			select {
			case <-run.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// stop ends the chat's indicators: typing stops, the ack reaction comes
// off (a channel with a done emoji puts that on instead).
func (ind *indicators) stop(ctx context.Context, c Channel, route protocol.Route, log *slog.Logger) {
	ind.mu.Lock()
	it := ind.running[chatOf(route)]
	delete(ind.running, chatOf(route))
	ind.mu.Unlock()
	if it == nil {
		return
	}
	it.stop()
	<-it.done
	if reactor, ok := c.(Reactor); ok && it.reacted != "" {
		cctx := context.WithoutCancel(ctx)
		ind.call(cctx, c, "unreact", log, func(ctx context.Context) error {
			return reactor.Unreact(ctx, route, it.reacted, reactor.AckEmoji())
		})
	}
}

// stopAll ends every indicator (the manager stops).
func (ind *indicators) stopAll() {
	ind.mu.Lock()
	all := ind.running
	ind.running = nil
	ind.mu.Unlock()
	for _, it := range all {
		it.stop()
		<-it.done
	}
}

// call makes one best-effort platform call; a failure is logged the first
// time per channel and call, so a server without it does not flood the log.
func (ind *indicators) call(ctx context.Context, c Channel, what string, log *slog.Logger, fn func(context.Context) error) bool {
	cctx, cancel := context.WithTimeout(ctx, platformCall)
	defer cancel()
	err := fn(cctx)
	if err == nil {
		return true
	}
	if ctx.Err() == nil {
		if _, seen := ind.warned.LoadOrStore(c.Name()+"\x00"+what, true); !seen {
			log.Warn(c.Name()+" "+what+" failed; replies still go out (logged once)", "error", err)
		}
	}
	return false
}
