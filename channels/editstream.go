package channels

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Editor is a channel whose replies the manager streams by editing one
// message in place: the first text of a model call is posted with
// SendPart, later text edits it, and the turn's answer takes the message
// over instead of posting a second one. A tool hint is posted as a Part
// with Hint set. A channel with a Streamer of its own draws its streams
// itself.
type Editor interface {
	PartSender
	// EditMessage makes a message it sent show text (Markdown). A
	// SendError with RetryAfter (a rate limit) holds the painter that long.
	EditMessage(ctx context.Context, route protocol.Route, messageID, text string) error
	// StreamEvery is how often a streamed message may be edited; 0 turns
	// streaming off (the channel's `streaming` key).
	StreamEvery() time.Duration
}

// EditEvery is an Editor's StreamEvery from its `streaming` key: every
// while it is on, 0 (no streaming) when it is off.
func EditEvery(streaming bool, every time.Duration) time.Duration {
	if !streaming {
		return 0
	}
	return every
}

// HintDrawer is an Editor that shows a tool hint its own way (Discord's
// small grey subtext); others show "↳ hint".
type HintDrawer interface {
	DrawHint(hint string) string
}

// streamTakeWait bounds how long an answer waits for drawing to finish.
const streamTakeWait = 15 * time.Second

// editStreams are the replies being drawn in each chat of Editor channels.
type editStreams struct {
	mu    sync.Mutex
	chats map[string]*drawing
	hints bool // channels.sendToolHints
	// progress is channels.sendProgress: without it the model's text is not
	// drawn while the turn runs, and the answer arrives whole.
	progress bool
	log      *slog.Logger
}

// drawing is what is being drawn in one chat.
type drawing struct {
	c        Editor
	segs     []*segment
	painting bool
	idle     chan struct{} // closed when the painter stops
	wake     chan struct{} // a new event for a painter waiting out the interval
	last     time.Time
	hold     time.Time // the platform asked to wait until then (a rate limit)
}

// segment is one message drawn while a turn runs: a model call's text or a tool hint.
type segment struct {
	route  protocol.Route // the route of the event that began it
	turn   string
	iter   int
	hint   bool
	hidden bool // a tool hint with sendToolHints off: not drawn, but the answer comes below it
	text   string
	ended  bool   // the model call finished: drawn at once, not paced
	id     string // "" until posted
	shown  string
	failed bool // drawing failed: the answer is sent whole
}

// event records one stream event; a painter per chat posts and edits, so
// the model's stream never waits on the platform.
func (e *editStreams) event(ctx context.Context, c Editor, ev StreamEvent) {
	if c.StreamEvery() <= 0 || ev.Route.ChatID == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	key := chatOf(ev.Route)
	d := e.chats[key]
	if d == nil {
		if e.chats == nil {
			e.chats = map[string]*drawing{}
		}
		d = &drawing{c: c, wake: make(chan struct{}, 1)}
		e.chats[key] = d
	}
	d.keepTurn(ev.Turn)
	switch {
	case ev.ToolHint != "":
		text := "↳ " + ev.ToolHint
		if h, ok := c.(HintDrawer); ok {
			text = h.DrawHint(ev.ToolHint)
		}
		d.segs = append(d.segs, &segment{route: ev.Route, turn: ev.Turn, iter: ev.Iteration, hint: true, hidden: !e.hints, text: text})
		if !e.hints {
			return
		}
	case ev.Reset:
		if s := d.find(ev.Turn, ev.Iteration); s != nil {
			s.text, s.ended = "", false // the retried call draws over the same message
		}
		return
	case ev.End:
		s := d.find(ev.Turn, ev.Iteration)
		if s == nil {
			return
		}
		s.ended = true
	case ev.Delta != "":
		if !e.progress {
			return
		}
		s := d.find(ev.Turn, ev.Iteration)
		if s == nil {
			s = &segment{route: ev.Route, turn: ev.Turn, iter: ev.Iteration}
			d.segs = append(d.segs, s)
		}
		s.text += ev.Delta
	default:
		return
	}
	if !d.painting {
		d.painting, d.idle = true, make(chan struct{})
		go e.paint(context.WithoutCancel(ctx), d)
		return
	}
	select {
	case d.wake <- struct{}{}:
	default: // the painter is already woken
	}
}

func (d *drawing) find(turn string, iter int) *segment {
	for i := len(d.segs) - 1; i >= 0; i-- {
		if s := d.segs[i]; !s.hint && s.turn == turn && s.iter == iter {
			return s
		}
	}
	return nil
}

// posted counts the turn's texts drawn before seg: a channel answers the
// user's message with the first only (its Part.Index is 0), as an answer
// that was not drawn does with its first part.
func (d *drawing) posted(seg *segment) int {
	n := 0
	for _, s := range d.segs {
		if s == seg {
			break
		}
		if s.turn == seg.turn && s.id != "" && !s.hint {
			n++
		}
	}
	return n
}

// keepTurn forgets what earlier turns left drawn (their answer was sent).
func (d *drawing) keepTurn(turn string) {
	keep := d.segs[:0]
	for _, s := range d.segs {
		if s.turn == turn {
			keep = append(keep, s)
		}
	}
	d.segs = keep
}

// want is what a segment should show now, cut to the platform's limit.
func (d *drawing) want(s *segment) (string, bool) {
	text := strings.TrimSpace(s.text)
	if s.failed || s.hidden || text == "" {
		return "", false
	}
	if limit := d.c.MaxLength(); limit > 1 && utf8.RuneCountInString(text) > limit {
		text = string([]rune(text)[:limit-1]) + "…"
	}
	return text, text != s.shown
}

// paint draws the chat's segments in order, each edit at most every
// StreamEvery, until nothing is left to draw.
func (e *editStreams) paint(ctx context.Context, d *drawing) {
	for {
		e.mu.Lock()
		var seg *segment
		var text string
		for _, s := range d.segs {
			if t, ok := d.want(s); ok {
				seg, text = s, t
				break
			}
		}
		if seg == nil {
			d.painting = false
			close(d.idle)
			e.mu.Unlock()
			return
		}
		id, wait := seg.id, time.Until(d.hold)
		if id != "" && !seg.ended {
			wait = max(wait, d.c.StreamEvery()-time.Since(d.last))
		}
		route, index := seg.route, d.posted(seg)
		if seg.hint {
			route.ReplyTo = "" // progress answers nobody: the turn's first text does
		}
		e.mu.Unlock()
		if wait > 0 {
			select { // the painter's own pace; an ended call is drawn at once
			case <-time.After(wait):
			case <-d.wake:
			}
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, platformCall)
		var err error
		if id == "" {
			id, err = d.c.SendPart(cctx, Reply{Route: route, Turn: seg.turn, Kind: protocol.ReplyMessage}, Part{Index: index, Text: text, Last: true, Hint: seg.hint})
		} else {
			err = d.c.EditMessage(cctx, route, id, text)
		}
		cancel()
		e.mu.Lock()
		d.last = time.Now()
		var limited *SendError
		switch {
		case errors.As(err, &limited) && limited.RetryAfter > 0:
			d.hold = d.last.Add(limited.RetryAfter) // drawn again once the platform allows
		case err != nil:
			seg.failed = true
			e.log.Warn("could not draw the reply as it streams; the answer will be sent whole", "channel", d.c.Name(), "chat", route.ChatID, "error", err)
		default:
			seg.id, seg.shown = id, text
		}
		e.mu.Unlock()
	}
}

// take waits for the chat's drawing to finish and hands the answer the
// message of the turn's last model call ("" if it drew nothing, or a tool
// hint came after it) with what it shows; the turn's segments are forgotten.
func (e *editStreams) take(route protocol.Route, turn string) (id, shown string) {
	key := chatOf(route)
	deadline := time.After(streamTakeWait)
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.chats[key]
	if d == nil {
		return "", ""
	}
	e.waitIdle(d, deadline)
	keep := d.segs[:0]
	for _, s := range d.segs {
		if s.turn != turn {
			keep = append(keep, s)
			continue
		}
		id, shown = "", "" // only the turn's last drawing can become the answer
		if !s.hint && s.id != "" {
			id, shown = s.id, s.shown
		}
	}
	d.segs = keep
	if len(d.segs) == 0 && !d.painting {
		delete(e.chats, key)
	}
	return id, shown
}

// waitIdle waits, with e.mu held, until the chat's painter stops or deadline fires.
func (e *editStreams) waitIdle(d *drawing, deadline <-chan time.Time) {
	for d.painting {
		idle := d.idle
		e.mu.Unlock()
		select {
		case <-idle:
			e.mu.Lock()
		case <-deadline:
			e.mu.Lock()
			return
		}
	}
}

// streamDrawnWait bounds how long a model call waits for its text to be drawn.
const streamDrawnWait = 5 * time.Second

// drawn is the message showing one model call's whole text, once drawn, if
// it is the turn's last drawing (the one its answer takes over); the
// turn's segments stay for take.
func (e *editStreams) drawn(route protocol.Route, turn string, iteration int) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.chats[chatOf(route)]
	if d == nil {
		return ""
	}
	e.waitIdle(d, time.After(streamDrawnWait))
	id := ""
	for _, s := range d.segs {
		if s.turn != turn {
			continue
		}
		id = ""
		if !s.hint && s.iter == iteration && s.id != "" {
			if _, pending := d.want(s); !pending {
				id = s.id
			}
		}
	}
	return id
}
