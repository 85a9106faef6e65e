package channels

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/protocol"
)

// EditDrawer is a platform's side of drawing replies as they are
// generated, by posting a message and editing it (Discord; Telegram's and
// Slack's streams work the same way and may move onto EditStreams).
type EditDrawer interface {
	// DrawText is what a model call's text shows while it streams, and once
	// the call ended (then: the first part the final answer will have).
	DrawText(text string, ended bool) string
	// DrawHint is what a tool hint shows.
	DrawHint(hint string) string
	// PostDrawn posts a message; first is the turn's first in the chat (the
	// one that may answer the user's message).
	PostDrawn(ctx context.Context, route protocol.Route, text string, first bool) (id string, err error)
	EditDrawn(ctx context.Context, route protocol.Route, id, text string) error
}

// EditStreamOptions tune EditStreams.
type EditStreamOptions struct {
	// Interval spaces the edits of a message being drawn.
	Interval time.Duration
	// Wait bounds how long Take waits for drawing to finish.
	Wait time.Duration
	// Streaming draws the model's text; off, only tool hints are drawn.
	Streaming bool
	// ToolHints draws the tool hints (channels.sendToolHints).
	ToolHints bool
	Log       *slog.Logger
}

// EditStreams draw stream events chat by chat: Record only notes an event
// (the model's stream never waits on the platform); one painter goroutine
// per chat posts and edits; Take hands a turn's answer the message it may
// take over.
type EditStreams struct {
	Options EditStreamOptions
	d       EditDrawer
	mu      sync.Mutex
	ctx     context.Context // nil until Start: events are noted, nothing is drawn
	chats   map[string]*drawnChat
}

// drawing is one message drawn while a turn runs: the text of one model
// call, or a tool hint.
type drawing struct {
	turn   string
	iter   int
	hint   bool
	text   string
	ended  bool
	msgID  string // "" until posted
	shown  string // what the message shows now
	failed bool   // drawing failed; the final answer is sent whole
}

// drawnChat is what is being drawn in one chat, and whether its painter runs.
type drawnChat struct {
	route    protocol.Route
	segs     []*drawing
	painting bool
	idle     chan struct{} // closed when the painter stops
	wake     chan struct{} // a new event for a painter waiting out the interval
	last     time.Time     // the painter's last call
}

// NewEditStreams draws through d.
func NewEditStreams(d EditDrawer, o EditStreamOptions) *EditStreams {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &EditStreams{Options: o, d: d, chats: map[string]*drawnChat{}}
}

// Start lets the painters run until ctx ends.
func (st *EditStreams) Start(ctx context.Context) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ctx = ctx
}

func drawnKey(r protocol.Route) string { return r.ChatID + "/" + r.ThreadID }

// Record notes one stream event and wakes the chat's painter.
func (st *EditStreams) Record(ev StreamEvent) {
	st.mu.Lock()
	defer st.mu.Unlock()
	key := drawnKey(ev.Route)
	cs := st.chats[key]
	if cs == nil {
		cs = &drawnChat{route: ev.Route, wake: make(chan struct{}, 1)}
		st.chats[key] = cs
	}
	cs.dropOtherTurns(ev.Turn)
	switch {
	case ev.ToolHint != "":
		if !st.Options.ToolHints {
			return
		}
		cs.segs = append(cs.segs, &drawing{turn: ev.Turn, iter: ev.Iteration, hint: true, text: ev.ToolHint, ended: true})
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
		if !st.Options.Streaming {
			return
		}
		s := cs.find(ev.Turn, ev.Iteration)
		if s == nil {
			s = &drawing{turn: ev.Turn, iter: ev.Iteration}
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
	if !cs.painting && st.ctx != nil {
		cs.painting, cs.idle = true, make(chan struct{})
		go st.paint(st.ctx, cs)
	}
}

// find returns the text drawing of one model call.
func (cs *drawnChat) find(turn string, iter int) *drawing {
	for i := len(cs.segs) - 1; i >= 0; i-- {
		if s := cs.segs[i]; !s.hint && s.turn == turn && s.iter == iter {
			return s
		}
	}
	return nil
}

// dropOtherTurns forgets what earlier turns left drawn (their answer was sent).
func (cs *drawnChat) dropOtherTurns(turn string) {
	keep := cs.segs[:0]
	for _, s := range cs.segs {
		if s.turn == turn {
			keep = append(keep, s)
		}
	}
	cs.segs = keep
}

// want is what a drawing should show, and whether that needs a call: a
// tool hint once; a model call's text as it grows and once it ended.
func (st *EditStreams) want(s *drawing) (string, bool) {
	switch {
	case s.failed:
		return "", false
	case s.hint:
		return st.d.DrawHint(s.text), s.msgID == ""
	}
	text := st.d.DrawText(s.text, s.ended)
	return text, text != "" && text != s.shown
}

// paint draws the chat's drawings in order until nothing is left to draw.
func (st *EditStreams) paint(ctx context.Context, cs *drawnChat) {
	for {
		st.mu.Lock()
		var seg *drawing
		var text string
		for _, s := range cs.segs {
			if t, ok := st.want(s); ok {
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
		id, route, first := seg.msgID, cs.route, true
		for _, s := range cs.segs {
			if s.turn == seg.turn && s.msgID != "" {
				first = false
			}
		}
		var wait time.Duration
		if id != "" && !seg.ended {
			wait = st.Options.Interval - time.Since(cs.last)
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
		var err error
		if id == "" {
			id, err = st.d.PostDrawn(ctx, route, text, first)
		} else {
			err = st.d.EditDrawn(ctx, route, id, text)
		}
		st.mu.Lock()
		cs.last = time.Now()
		if err != nil {
			seg.failed = true
			st.Options.Log.Warn("could not draw the reply as it streams; the answer will be sent whole", "chat", route.ChatID, "error", err)
		} else {
			seg.msgID, seg.shown = id, text
		}
		st.mu.Unlock()
	}
}

// Take waits for the chat's drawing to finish and hands the final answer
// the message of the turn's last model call ("" if that call drew nothing,
// or a tool hint came after it), with what it shows; the turn's drawings
// are forgotten.
func (st *EditStreams) Take(route protocol.Route, turn string) (id, shown string) {
	key := drawnKey(route)
	deadline := time.After(st.Options.Wait)
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
			st.Options.Log.Warn("stream still drawing when the answer came; taking over what was drawn", "chat", route.ChatID)
			break wait
		}
	}
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
