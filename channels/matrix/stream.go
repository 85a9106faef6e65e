package matrix

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
)

// Streaming (channels.matrix.streaming): the first delta of a model call
// posts an event answering the user's, later ones edit it (m.replace) at
// most once per streamInterval; the turn's answer replaces the last
// streamed event instead of posting another. A model call after a tool
// streams into a new event: the text before the tool stays as it was.
const (
	streamInterval = time.Second
	// streamWait bounds how long the answer waits for a draw in flight.
	streamWait = 15 * time.Second
	// streamTTL forgets streams whose answer was delivered elsewhere.
	streamTTL = 30 * time.Minute
)

// stream is what is drawn of one turn's reply in one room (thread).
type stream struct {
	route    protocol.Route
	iter     int    // the model call being drawn
	text     string // its text so far
	eventID  string // the event showing it ("" until posted)
	shown    string // the text last drawn there
	toolsRan bool   // a tool ran after it: the answer comes in a new event
	failed   bool   // drawing failed; the answer is sent whole
	done     bool   // the answer took over
	painting bool
	idle     chan struct{} // closed when the painter stops
	hold     time.Time     // a 429's retry_after
	last     time.Time
	touched  time.Time
}

type streams struct {
	c     *Channel
	mu    sync.Mutex
	byKey map[string]*stream
	wg    sync.WaitGroup
	ctx   context.Context // the channel's run; painters stop with it
}

func newStreams(c *Channel) *streams {
	return &streams{c: c, byKey: map[string]*stream{}, ctx: context.Background()}
}

func streamKey(turn string, r protocol.Route) string {
	return turn + "\x00" + r.ChatID + "\x00" + r.ThreadID
}

// SendDelta implements channels.Streamer. It only records the event: a
// painter goroutine per stream posts and edits, so the model never waits
// on the homeserver.
func (c *Channel) SendDelta(_ context.Context, ev channels.StreamEvent) {
	if !c.cfg.Streaming || ev.Turn == "" || ev.Route.ChatID == "" {
		return
	}
	c.streams.event(ev)
}

func (s *streams) event(ev channels.StreamEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, st := range s.byKey {
		if now.Sub(st.touched) > streamTTL && !st.painting {
			delete(s.byKey, k)
		}
	}
	key := streamKey(ev.Turn, ev.Route)
	st := s.byKey[key]
	if st == nil {
		if ev.Delta == "" {
			return
		}
		st = &stream{route: ev.Route, iter: ev.Iteration}
		s.byKey[key] = st
	}
	if st.done {
		return
	}
	st.touched = now
	switch {
	case ev.Reset:
		if ev.Iteration == st.iter {
			st.text = "" // a retried model call draws over the same event
		}
	case ev.ToolHint != "":
		st.toolsRan = true
	case ev.Delta != "":
		if ev.Iteration != st.iter || st.toolsRan {
			st.iter, st.text, st.eventID, st.shown, st.toolsRan, st.failed = ev.Iteration, "", "", "", false, false
		}
		st.text += ev.Delta
	default:
		return
	}
	if !st.painting && !st.failed {
		st.painting, st.idle = true, make(chan struct{})
		s.wg.Add(1)
		go s.paint(st)
	}
}

// preview is a stream's text as drawn: the model's thinking left out, cut
// to one event.
func preview(markdown string) string {
	text := strings.TrimSpace(providers.StripThink(markdown))
	if r := []rune(text); len(r) > MaxMessageRunes {
		text = string(r[:MaxMessageRunes-1]) + "…"
	}
	return text
}

// paint draws the stream until nothing is left to draw.
func (s *streams) paint(st *stream) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		text := preview(st.text)
		if st.done || st.failed || text == "" || text == st.shown || s.ctx.Err() != nil {
			st.painting = false
			close(st.idle)
			s.mu.Unlock()
			return
		}
		wait := time.Until(st.hold)
		if st.eventID != "" {
			wait = max(wait, streamInterval-time.Since(st.last))
		}
		eventID, iter, route := st.eventID, st.iter, st.route
		s.mu.Unlock()
		if wait > 0 {
			select {
			case <-s.ctx.Done():
			case <-time.After(wait):
			}
			continue // draw the newest text, not the one seen before the wait
		}
		var err error
		if eventID == "" {
			content := textContent(text)
			content.RelatesTo = relation(route, true)
			eventID, err = s.c.post(s.ctx, route.ChatID, content)
		} else {
			err = s.c.send(s.ctx, route.ChatID, editContent(eventID, text))
		}
		s.mu.Lock()
		st.last = time.Now()
		wait, limited := retryAfter(err)
		switch {
		case err == nil && st.iter == iter:
			st.eventID, st.shown = eventID, text
		case limited:
			st.hold = time.Now().Add(wait)
		case err != nil:
			st.failed = true
			s.c.log.Warn("matrix could not draw the reply as it streams; the answer will be sent whole", "room", route.ChatID, "error", err)
		}
		s.mu.Unlock()
	}
}

// finish stops drawing the turn's stream in that room, waits for a draw
// in flight, and returns the event the answer should replace ("" when
// there is none, or a tool ran after it).
func (s *streams) finish(turn string, r protocol.Route) string {
	key := streamKey(turn, r)
	s.mu.Lock()
	st := s.byKey[key]
	if st == nil {
		s.mu.Unlock()
		return ""
	}
	st.done = true
	idle := st.idle
	painting := st.painting
	s.mu.Unlock()
	if painting {
		select {
		case <-idle:
		case <-time.After(streamWait):
			s.c.log.Warn("matrix stream still drawing when the answer came", "room", r.ChatID)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byKey, key)
	if st.toolsRan {
		return ""
	}
	return st.eventID
}

// start gives the painters the channel's run context.
func (s *streams) start(ctx context.Context) {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
}

// wait waits for the painters to stop (the run context ended).
func (s *streams) wait() { s.wg.Wait() }
