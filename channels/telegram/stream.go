package telegram

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/protocol"
)

// streamWait bounds how long the final reply waits for drawing to finish.
const streamWait = 15 * time.Second

// segment is one message drawn while a turn runs: the text of one model
// call, or a tool hint.
type segment struct {
	turn  string
	iter  int
	hint  bool
	text  string
	ended bool
	msgID int    // 0 until sent
	shown string // what the message shows now
	// failed: drawing it failed; the final reply takes over.
	failed bool
}

// chatStream is what is being drawn in one chat, and its painter.
type chatStream struct {
	route    protocol.Route
	segs     []*segment
	painting bool
	idle     chan struct{} // closed when the painter stops
	last     time.Time     // last Bot API call of the painter
}

func chatKey(r protocol.Route) string { return r.ChatID + "/" + r.ThreadID }

// SendDelta implements channels.Streamer. It only records the event; a
// painter goroutine per chat sends and edits messages, at most once per
// streamEditInterval, so the model's stream never waits on Telegram.
func (c *Channel) SendDelta(_ context.Context, ev channels.StreamEvent) {
	if ev.Route.ChatID == "" || c.bot == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := chatKey(ev.Route)
	cs := c.streams[key]
	if cs == nil {
		cs = &chatStream{route: ev.Route}
		c.streams[key] = cs
	}
	cs.dropOtherTurns(ev.Turn)
	switch {
	case ev.ToolHint != "":
		if !c.shared.SendToolHints {
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
		if !c.cfg.Streaming {
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
	if !cs.painting && c.runCtx != nil {
		cs.painting, cs.idle = true, make(chan struct{})
		go c.paint(cs)
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

// dropOtherTurns forgets what earlier turns left drawn (their reply was sent).
func (cs *chatStream) dropOtherTurns(turn string) {
	keep := cs.segs[:0]
	for _, s := range cs.segs {
		if s.turn == turn {
			keep = append(keep, s)
		}
	}
	cs.segs = keep
}

// want is what a segment should show: a tool hint as a collapsed quote; a
// model call's text as plain text while it streams (half-written Markdown
// does not parse) and as HTML once the call ended.
func (c *Channel) want(s *segment) (text string, html bool, ok bool) {
	if s.failed {
		return "", false, false
	}
	if s.hint {
		return "<blockquote expandable>↳ " + markdown.EscapeHTML(s.text) + "</blockquote>", true, s.msgID == 0
	}
	if s.ended {
		pieces := markdown.Split(s.text, MaxMessageRunes)
		if len(pieces) == 0 {
			return "", false, false
		}
		h := markdown.TelegramHTML(pieces[0])
		return h, true, h != s.shown
	}
	preview := strings.TrimSpace(s.text)
	if preview == "" {
		return "", false, false
	}
	if utf8.RuneCountInString(preview) > MaxMessageRunes {
		preview = string([]rune(preview)[:MaxMessageRunes]) + "…"
	}
	return preview, false, preview != s.shown
}

// paint draws the chat's segments in order until nothing is left to draw.
func (c *Channel) paint(cs *chatStream) {
	interval := time.Duration(c.cfg.StreamEditInterval * float64(time.Second))
	for {
		c.mu.Lock()
		var seg *segment
		var text string
		var html bool
		for _, s := range cs.segs {
			if t, h, ok := c.want(s); ok {
				seg, text, html = s, t, h
				break
			}
		}
		if seg == nil || c.runCtx.Err() != nil {
			cs.painting = false
			close(cs.idle)
			c.mu.Unlock()
			return
		}
		id, md, route := seg.msgID, seg.text, cs.route
		var wait time.Duration
		if id != 0 && !seg.ended {
			wait = interval - time.Since(cs.last)
		}
		c.mu.Unlock()
		if wait > 0 {
			select {
			case <-c.runCtx.Done():
			case <-time.After(wait):
			}
			continue // draw the newest text, not the one seen before the wait
		}
		ctx, cancel := c.callCtx()
		var err error
		switch {
		case id == 0 && html && !seg.hint:
			id, err = c.sendChunk(ctx, route, markdown.Split(md, MaxMessageRunes)[0], nil)
		case id == 0:
			id, err = c.sendText(ctx, route, text, html, nil)
		case html:
			err = c.editChunk(ctx, route, id, markdown.Split(md, MaxMessageRunes)[0], "")
		default:
			err = c.editText(ctx, route, id, text, false)
			if isNotModified(err) {
				err = nil
			}
		}
		cancel()
		c.mu.Lock()
		cs.last = time.Now()
		if err != nil {
			seg.failed = true
			c.log.Warn("telegram could not draw the reply as it streams; the final reply will be sent whole", "chat", route.ChatID, "error", err)
		} else {
			seg.msgID, seg.shown = id, text
		}
		c.mu.Unlock()
	}
}

// takeStream waits for the chat's drawing to finish and hands the final
// reply the message of the turn's last model call (0 if that call drew
// nothing, or a tool hint came after it), with what that message shows;
// the turn's segments are forgotten.
func (c *Channel) takeStream(route protocol.Route, turn string) (int, string) {
	key := chatKey(route)
	deadline := time.After(streamWait)
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := c.streams[key]
	if cs == nil {
		return 0, ""
	}
wait:
	for cs.painting {
		idle := cs.idle
		c.mu.Unlock()
		select {
		case <-idle:
			c.mu.Lock()
		case <-deadline:
			c.mu.Lock()
			c.log.Warn("telegram stream still drawing when the reply came; editing what was drawn", "chat", route.ChatID)
			break wait
		}
	}
	var msgID int
	var shown string
	keep := cs.segs[:0]
	for _, s := range cs.segs {
		if s.turn != turn {
			keep = append(keep, s)
			continue
		}
		// only the turn's last drawing can become the reply: text drawn before a tool hint stays
		msgID, shown = 0, ""
		if !s.hint && s.msgID != 0 {
			msgID, shown = s.msgID, s.shown
		}
	}
	cs.segs = keep
	if len(cs.segs) == 0 && !cs.painting {
		delete(c.streams, key)
	}
	return msgID, shown
}
