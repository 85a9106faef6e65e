package discord

import (
	"context"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

const (
	// streamInterval spaces the edits of a message being drawn (Discord
	// allows about five edits per five seconds in a channel).
	streamInterval = time.Second
	// streamWait bounds how long the final answer waits for drawing to finish.
	streamWait = 15 * time.Second
)

// segment is one message drawn while a turn runs: the text of one model
// call, or a tool hint.
type segment struct {
	turn   string
	iter   int
	hint   bool
	text   string
	ended  bool
	msgID  string // "" until posted
	shown  string // what the message shows now
	failed bool   // drawing failed; the final answer is posted whole
}

// chatStream is what is being drawn in one chat, and whether its painter runs.
type chatStream struct {
	route    protocol.Route
	segs     []*segment
	painting bool
	idle     chan struct{} // closed when the painter stops
	wake     chan struct{} // a new event for a painter waiting out the interval
	last     time.Time     // the painter's last REST call
}

// streams draw replies as they are generated: SendDelta records, one
// painter goroutine per chat posts and edits.
type streams struct {
	c        *Channel
	interval time.Duration
	mu       sync.Mutex
	chats    map[string]*chatStream
}

func newStreams(c *Channel) *streams {
	return &streams{c: c, interval: streamInterval, chats: map[string]*chatStream{}}
}

func streamKey(r protocol.Route) string { return r.ChatID + "/" + r.ThreadID }

// SendDelta implements channels.Streamer. It only records the event, so
// the model's stream never waits on Discord.
func (c *Channel) SendDelta(_ context.Context, ev channels.StreamEvent) {
	if !snowflake.MatchString(ev.Route.ChatID) {
		return
	}
	c.streams.record(ev)
}

func (st *streams) record(ev channels.StreamEvent) {
	st.mu.Lock()
	defer st.mu.Unlock()
	key := streamKey(ev.Route)
	cs := st.chats[key]
	if cs == nil {
		cs = &chatStream{route: ev.Route, wake: make(chan struct{}, 1)}
		st.chats[key] = cs
	}
	cs.dropOtherTurns(ev.Turn)
	switch {
	case ev.ToolHint != "":
		if !st.c.toolHints {
			return
		}
		cs.segs = append(cs.segs, &segment{turn: ev.Turn, iter: ev.Iteration, hint: true, text: ev.ToolHint, ended: true})
	case ev.Reset:
		if s := cs.find(ev.Turn, ev.Iteration); s != nil {
			s.text, s.ended = "", false // the retried call draws over the same message
		}
		return
	case ev.End:
		s := cs.find(ev.Turn, ev.Iteration)
		if s == nil {
			return
		}
		s.ended = true
	case ev.Delta != "":
		if !st.c.cfg.Streaming {
			return
		}
		s := cs.find(ev.Turn, ev.Iteration)
		if s == nil {
			s = &segment{turn: ev.Turn, iter: ev.Iteration}
			cs.segs = append(cs.segs, s)
		}
		s.text += ev.Delta
	default:
		return
	}
	select {
	case cs.wake <- struct{}{}:
	default:
	}
	ctx := st.c.runContext()
	if !cs.painting && ctx != nil {
		cs.painting, cs.idle = true, make(chan struct{})
		go st.paint(ctx, cs)
	}
}

// find returns the text segment of one model call.
func (cs *chatStream) find(turn string, iter int) *segment {
	for i := len(cs.segs) - 1; i >= 0; i-- {
		if s := cs.segs[i]; !s.hint && s.turn == turn && s.iter == iter {
			return s
		}
	}
	return nil
}

// dropOtherTurns forgets what earlier turns left drawn (their answer was sent).
func (cs *chatStream) dropOtherTurns(turn string) {
	keep := cs.segs[:0]
	for _, s := range cs.segs {
		if s.turn == turn {
			keep = append(keep, s)
		}
	}
	cs.segs = keep
}

// want is what a segment should show, and whether that needs a call: a
// tool hint once; a model call's text as it grows (cut at Discord's limit),
// and once it ended, the first part the final answer will have.
func want(s *segment) (string, bool) {
	switch {
	case s.failed:
		return "", false
	case s.hint:
		return "-# ↳ " + s.text, s.msgID == ""
	case s.ended:
		parts := channels.Parts(channels.Reply{Text: s.text}, maxMessageRunes)
		if len(parts) == 0 {
			return "", false
		}
		text := render(parts[0].Text)
		return text, text != s.shown
	}
	preview := render(s.text)
	if preview == "" {
		return "", false
	}
	if utf8.RuneCountInString(preview) > maxMessageRunes {
		preview = string([]rune(preview)[:maxMessageRunes-1]) + "…"
	}
	return preview, preview != s.shown
}

// paint draws the chat's segments in order until nothing is left to draw.
func (st *streams) paint(ctx context.Context, cs *chatStream) {
	for {
		st.mu.Lock()
		var seg *segment
		var text string
		for _, s := range cs.segs {
			if t, ok := want(s); ok {
				seg, text = s, t
				break
			}
		}
		if seg == nil || ctx.Err() != nil {
			cs.painting = false
			close(cs.idle)
			st.mu.Unlock()
			return
		}
		id, route := seg.msgID, cs.route
		ref := st.c.reference(route, 0)
		for _, s := range cs.segs {
			if s.turn == seg.turn && s.msgID != "" {
				ref = nil // only the turn's first message answers the user's
			}
		}
		var wait time.Duration
		if id != "" && !seg.ended {
			wait = st.interval - time.Since(cs.last)
		}
		st.mu.Unlock()
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
			case <-cs.wake: // the call may have ended: that is drawn at once
			case <-timer.C:
			}
			timer.Stop()
			continue // draw the newest text, not the one seen before the wait
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		var err error
		if id == "" {
			id, err = st.c.post(cctx, route.ChatID, newMessage(text, ref))
		} else {
			err = st.c.edit(cctx, route.ChatID, id, text)
		}
		cancel()
		st.mu.Lock()
		cs.last = time.Now()
		if err != nil {
			seg.failed = true
			st.c.log.Warn("discord could not draw the reply as it streams; the answer will be posted whole", "channel_id", route.ChatID, "error", err)
		} else {
			seg.msgID, seg.shown = id, text
		}
		st.mu.Unlock()
	}
}

// take waits for the chat's drawing to finish and hands the final answer
// the message of the turn's last model call ("" if that call drew nothing,
// or a tool hint came after it), with what it shows; the turn's segments
// are forgotten.
func (st *streams) take(route protocol.Route, turn string) (string, string) {
	key := streamKey(route)
	deadline := time.After(streamWait)
	st.mu.Lock()
	defer st.mu.Unlock()
	cs := st.chats[key]
	if cs == nil {
		return "", ""
	}
wait:
	for cs.painting {
		idle := cs.idle
		st.mu.Unlock()
		select {
		case <-idle:
			st.mu.Lock()
		case <-deadline:
			st.mu.Lock()
			st.c.log.Warn("discord stream still drawing when the answer came; editing what was drawn", "channel_id", route.ChatID)
			break wait
		}
	}
	var id, shown string
	keep := cs.segs[:0]
	for _, s := range cs.segs {
		if s.turn != turn {
			keep = append(keep, s)
			continue
		}
		// only the turn's last drawing can become the answer: text drawn before a tool hint stays
		id, shown = "", ""
		if !s.hint && s.msgID != "" {
			id, shown = s.msgID, s.shown
		}
	}
	cs.segs = keep
	if len(cs.segs) == 0 && !cs.painting {
		delete(st.chats, key)
	}
	return id, shown
}
