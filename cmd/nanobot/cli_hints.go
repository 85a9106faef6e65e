package main

import (
	"slices"
	"sync"

	"github.com/nanobot-durable/nanobot/channels"
)

// hintLines are the tool lines a thin client draws for the turn it follows,
// polled from the turn's state by the wait loop and, just before each
// reply, by the delivery: each line is drawn once, in order, and none
// after the answer to the followed message.
type hintLines struct {
	mu        sync.Mutex
	following bool   // a turn is followed (wait runs) and not answered yet
	msgID     string // the followed message ("" when catching up on a turn)
	shown     int    // lines of the turn's state already drawn
	asked     uint64 // state queries begun
	drawnAt   uint64 // the query whose state was drawn last
}

// follow starts on the turn of message msgID, nothing of it drawn yet.
func (h *hintLines) follow(msgID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.following, h.msgID, h.shown = true, msgID, 0
}

// stop ends the following: no line is drawn until the next follow.
func (h *hintLines) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.following = false
}

// ask numbers a state query before it is sent, so an answer that comes
// back after a newer one was drawn is known for stale.
func (h *hintLines) ask() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked++
	return h.asked
}

// draw draws the lines of hints (the turn's state, asked as query) not
// drawn yet, unless the turn is answered or a newer state was drawn.
func (h *hintLines) draw(cli *channels.CLI, query uint64, hints []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.following || query < h.drawnAt {
		return
	}
	h.drawnAt = query
	if len(hints) < h.shown {
		h.shown = 0 // a new run of the session
	}
	for _, line := range hints[h.shown:] {
		cli.Hint(line)
	}
	h.shown = len(hints)
}

// isFollowing reports whether lines may still be drawn.
func (h *hintLines) isFollowing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.following
}

// answered stops the drawing once r answers the followed message: a
// line polled after it would land behind the answer.
func (h *hintLines) answered(r channels.Reply) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.msgID != "" && slices.Contains(r.MessageIDs, h.msgID) {
		h.following = false
	}
}
