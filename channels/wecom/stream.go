package wecom

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nanobot-durable/nanobot/channels"
)

// streamEvery spaces the updates of a stream being drawn.
const streamEvery = time.Second

// finishWait bounds how long an answer waits for the stream's last update.
const finishWait = 15 * time.Second

// drawing is the stream a turn draws on its message's callback: WeCom
// shows the latest content under one stream id until a frame finishes it,
// and the turn's answer is that frame.
type drawing struct {
	reqID, id, turn string
	at              time.Time
	iter            int
	text, hint      string
	shown           string
	finished        bool
	failed          bool // an update failed: the answer is a stream of its own
	painting        bool
	idle            chan struct{} // closed when the painter stops
}

// streams are the drawings in progress, by the message they answer.
type streams struct {
	mu    sync.Mutex
	byMsg map[string]*drawing
}

// SendDelta implements channels.Streamer: with channels.sendProgress on,
// the reply is drawn as it is generated into one stream on the message's
// callback (the model call's text; a tool hint under it while the tool
// runs, with channels.sendToolHints), at most once a second.
func (c *Channel) SendDelta(ctx context.Context, ev channels.StreamEvent) {
	if !c.progress || ev.Route.ReplyTo == "" {
		return
	}
	reqID := c.replies.get(ev.Route.ReplyTo)
	if reqID == "" {
		return
	}
	s := &c.streams
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.byMsg[ev.Route.ReplyTo]
	if d == nil || d.turn != ev.Turn {
		if ev.Delta == "" && ev.ToolHint == "" {
			return
		}
		d = &drawing{reqID: reqID, id: newReqID("stream"), turn: ev.Turn, iter: ev.Iteration, at: time.Now()}
		if s.byMsg == nil {
			s.byMsg = map[string]*drawing{}
		}
		for k, old := range s.byMsg { // an answer that went proactively left its drawing
			if time.Since(old.at) > replyWindow && !old.painting {
				delete(s.byMsg, k)
			}
		}
		s.byMsg[ev.Route.ReplyTo] = d
	}
	switch {
	case ev.ToolHint != "":
		if !c.hints {
			return
		}
		d.hint = "↳ " + ev.ToolHint
	case ev.Reset:
		if ev.Iteration == d.iter {
			d.text = ""
		}
		return
	case ev.Delta != "":
		if ev.Iteration != d.iter { // a new model call draws over the last one's text
			d.iter, d.text, d.hint = ev.Iteration, "", ""
		}
		d.text += ev.Delta
	default:
		return
	}
	if !d.painting && !d.finished {
		d.painting, d.idle = true, make(chan struct{})
		go c.paint(context.WithoutCancel(ctx), d)
	}
}

// want is what the drawing should show now, cut to a part's limit.
func (d *drawing) want() string {
	text := strings.TrimSpace(d.text)
	if d.hint != "" {
		text = strings.TrimSpace(text + "\n\n" + d.hint)
	}
	text = format.Markdown(text)
	if utf8.RuneCountInString(text) > maxRunes {
		text = string([]rune(text)[:maxRunes-1]) + "…"
	}
	return text
}

// paint sends the drawing's updates (finish false) until nothing new is
// left to show or the answer takes the stream over.
func (c *Channel) paint(ctx context.Context, d *drawing) {
	s := &c.streams
	for {
		s.mu.Lock()
		text := d.want()
		if d.finished || text == "" || text == d.shown {
			d.painting = false
			close(d.idle)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		cn := c.current()
		var err error
		if cn != nil {
			cctx, cancel := context.WithTimeout(ctx, ackTimeout)
			_, err = cn.request(cctx, cmdRespond, d.reqID, streamBody{MsgType: "stream", Stream: stream{ID: d.id, Content: text}})
			cancel()
		}
		s.mu.Lock()
		if cn == nil || err != nil {
			c.Log.Warn("wecom stream not drawn; the answer will be sent whole", "error", err)
			d.finished, d.failed, d.painting = true, true, false // the answer goes as a stream of its own
			close(d.idle)
			s.mu.Unlock()
			return
		}
		d.shown = text
		s.mu.Unlock()
		select {
		case <-time.After(c.streamEvery):
		case <-ctx.Done():
		}
	}
}

// take hands the answer to msgID of turn the stream drawn for it ("" if
// none), once its painter is done.
func (c *Channel) take(msgID, turn string) (reqID, id string) {
	s := &c.streams
	s.mu.Lock()
	d := s.byMsg[msgID]
	if d == nil || d.turn != turn {
		s.mu.Unlock()
		return "", ""
	}
	delete(s.byMsg, msgID)
	d.finished = true // no update after the answer
	idle, painting := d.idle, d.painting
	s.mu.Unlock()
	if painting {
		select {
		case <-idle:
		case <-time.After(finishWait):
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.shown == "" || d.failed {
		return "", ""
	}
	return d.reqID, d.id
}
