package slack

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
)

// Streaming: the first delta of a model call posts a message in the
// thread, later ones edit it (chat.update) at most once per streamInterval;
// tool hints go in a message of their own; the turn's final reply edits
// the last streamed message instead of posting another.
const (
	streamInterval = time.Second
	streamTick     = 200 * time.Millisecond
	streamTTL      = 30 * time.Minute
	// errorPause keeps a stream from hammering Slack after a failed edit.
	errorPause = 5 * time.Second
)

// stream is what is drawn of one turn's reply in one thread.
type stream struct {
	io    sync.Mutex // held during a Slack call for this stream
	route protocol.Route

	// Guarded by streams.mu.
	seg      int    // which segment (model call's text) is being drawn
	text     string // the segment's Markdown so far
	ts       string // the message showing the segment
	drawn    string // the mrkdwn last drawn there
	dirty    bool   // text changed since it was last drawn
	ended    bool   // the segment's model call ended
	toolsRan bool   // tools ran after the segment: the final reply comes in a new message
	hints    []string
	hintTS   string
	hintsN   int // hints drawn
	done     bool
	failed   bool
	last     time.Time
	hold     time.Time
	touched  time.Time
}

// streamed is how a final reply finds its stream.
type streamed struct {
	ts   string
	open bool // the message holds the last model call's text: the reply replaces it
}

type streams struct {
	c     *Channel
	mu    sync.Mutex
	byKey map[string]*stream
	wg    sync.WaitGroup
}

func newStreams(c *Channel) *streams { return &streams{c: c, byKey: map[string]*stream{}} }

func streamKey(turn string, r protocol.Route) string {
	return turn + "\x00" + r.ChatID + "\x00" + r.ThreadID
}

// SendDelta implements channels.Streamer. It only records the event: the
// drawing happens on the stream ticker, so the model activity never waits on Slack.
func (c *Channel) SendDelta(_ context.Context, ev channels.StreamEvent) { c.streams.event(ev) }

func (s *streams) event(ev channels.StreamEvent) {
	if ev.Turn == "" || ev.Route.ChatID == "" {
		return
	}
	key := streamKey(ev.Turn, ev.Route)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.byKey[key]
	if st == nil {
		if ev.Delta == "" && ev.ToolHint == "" {
			return
		}
		st = &stream{route: ev.Route}
		s.byKey[key] = st
	}
	if st.done {
		return
	}
	st.touched = time.Now()
	switch {
	case ev.Reset:
		st.text, st.ended, st.dirty = "", false, true // a retried model call draws its segment again
	case ev.End:
		st.ended = true
	case ev.ToolHint != "":
		st.toolsRan = true
		if s.c.toolHints {
			st.hints = append(st.hints, ev.ToolHint)
		}
	case ev.Delta != "":
		if st.toolsRan || (st.ended && visible(st.text) != "") {
			st.seg++
			st.text, st.ts, st.drawn = "", "", ""
			st.hints, st.hintTS, st.hintsN = nil, "", 0
			st.toolsRan = false
		}
		st.ended, st.dirty = false, true
		st.text += ev.Delta
	}
}

func visible(markdown string) string { return strings.TrimSpace(providers.StripThink(markdown)) }

// render is a segment as mrkdwn, cut to one message while it streams.
func render(md string) string {
	text := markdown.SlackMrkdwn(visible(md))
	if r := []rune(text); len(r) > MaxMessageLen {
		text = string(r[:MaxMessageLen-1]) + "…"
	}
	return text
}

func renderHints(hints []string) string {
	lines := make([]string, len(hints))
	for i, h := range hints {
		lines[i] = "↳ `" + markdown.EscapeSlack(strings.ReplaceAll(h, "`", "'")) + "`"
	}
	return strings.Join(lines, "\n")
}

// finish stops drawing the turn's stream in that thread, waits for a
// call in flight, and tells the final reply where it was drawn.
func (s *streams) finish(turn string, r protocol.Route) *streamed {
	s.mu.Lock()
	st := s.byKey[streamKey(turn, r)]
	if st == nil {
		s.mu.Unlock()
		return nil
	}
	st.done = true
	s.mu.Unlock()
	st.io.Lock() // a post in flight sets ts before it lets go
	defer st.io.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return &streamed{ts: st.ts, open: !st.toolsRan}
}

// run draws the streams that changed, each at most once per streamInterval.
func (s *streams) run(ctx context.Context) {
	t := time.NewTicker(streamTick)
	defer t.Stop()
	defer s.wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, st := range s.due(time.Now()) {
				s.wg.Add(1)
				go func() { defer s.wg.Done(); s.draw(ctx, st) }()
			}
		}
	}
}

func (s *streams) due(now time.Time) []*stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*stream
	for k, st := range s.byKey {
		if now.Sub(st.touched) > streamTTL {
			delete(s.byKey, k)
			continue
		}
		if st.done || st.failed || now.Before(st.hold) || now.Sub(st.last) < streamInterval {
			continue
		}
		if st.dirty || len(st.hints) > st.hintsN {
			out = append(out, st)
		}
	}
	return out
}

// draw brings one stream's messages up to date.
func (s *streams) draw(ctx context.Context, st *stream) {
	if !st.io.TryLock() {
		return // still drawing the previous change
	}
	defer st.io.Unlock()
	s.mu.Lock()
	if st.done {
		s.mu.Unlock()
		return
	}
	seg, raw, ts, drawn := st.seg, st.text, st.ts, st.drawn
	hints, hintTS, hintsN := append([]string(nil), st.hints...), st.hintTS, st.hintsN
	route := st.route
	st.dirty = false
	s.mu.Unlock()
	text := render(raw) // outside the lock: SendDelta must not wait on it

	callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var err error
	if text != "" && text != drawn {
		var newTS string
		if ts == "" {
			newTS, err = s.c.post(callCtx, route, text)
		} else {
			err = s.c.update(callCtx, route.ChatID, ts, text)
		}
		s.mu.Lock()
		if err == nil && st.seg == seg {
			if newTS != "" {
				st.ts = newTS
			}
			st.drawn = text
		}
		if err != nil && st.seg == seg {
			st.dirty = true // draw it again after the pause
		}
		s.mu.Unlock()
	}
	if err == nil && len(hints) > hintsN {
		body := renderHints(hints)
		var newTS string
		if hintTS == "" {
			newTS, err = s.c.post(callCtx, route, body)
		} else {
			err = s.c.update(callCtx, route.ChatID, hintTS, body)
		}
		s.mu.Lock()
		if err == nil && st.seg == seg {
			if newTS != "" {
				st.hintTS = newTS
			}
			st.hintsN = len(hints)
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st.last = time.Now()
	if err == nil {
		return
	}
	var limited *slack.RateLimitedError
	switch se := sendError("stream", err); {
	case errors.As(err, &limited):
		st.hold = time.Now().Add(limited.RetryAfter)
	case isPermanent(se):
		st.failed = true // the final reply reports it
	default:
		st.hold = time.Now().Add(errorPause)
	}
	s.c.log.Debug("slack stream not drawn", "route", route.String(), "error", err)
}
