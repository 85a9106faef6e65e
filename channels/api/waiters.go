package api

import (
	"sync"
)

// waiter is one HTTP request waiting for its reply.
type waiter struct {
	msgID  string
	chat   string
	stream bool
	wake   chan struct{} // capacity 1: something for the handler to write

	// guarded by waiters.mu
	text    streamText
	pending []string // stream text not yet written
	done    *outcome // set once; the request is then no longer waited on
}

// outcome is how a request ends: a reply, or an error.
type outcome struct {
	reply string
	err   *apiError
}

// waiters are the requests of this process waiting for replies, by message
// ID and, per chat, in arrival order. A turn answers its chat's messages in
// the order they came, so the oldest request waiting in a chat is the one
// the running turn is answering: it is drawn the turn's stream, and it
// takes a reply that names no message (a message tool send, a /stop).
type waiters struct {
	mu     sync.Mutex
	byID   map[string]*waiter
	byChat map[string][]*waiter
	// answeredBy remembers, per chat, the turn whose message tool send
	// answered a request, so further sends of that turn are not taken for
	// the answer to the next request.
	answeredBy map[string]string
	// closed is the error every request gets once the server stops.
	closed *apiError
}

func newWaiters() *waiters {
	return &waiters{byID: map[string]*waiter{}, byChat: map[string][]*waiter{}, answeredBy: map[string]string{}}
}

// add registers a request before its message is published, so no reply can
// come before anyone waits for it.
func (ws *waiters) add(msgID, chat string, stream bool) *waiter {
	w := &waiter{msgID: msgID, chat: chat, stream: stream, wake: make(chan struct{}, 1)}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed != nil {
		w.done = &outcome{err: ws.closed}
		return w
	}
	ws.byID[msgID] = w
	ws.byChat[chat] = append(ws.byChat[chat], w)
	return w
}

// remove forgets a request (answered, timed out, or its client gone).
func (ws *waiters) remove(w *waiter) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.forget(w)
}

func (ws *waiters) forget(w *waiter) {
	if ws.byID[w.msgID] != w {
		return
	}
	delete(ws.byID, w.msgID)
	list := ws.byChat[w.chat]
	for i, x := range list {
		if x == w {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(ws.byChat, w.chat)
	} else {
		ws.byChat[w.chat] = list
	}
}

// finish ends a request with an outcome; the caller holds ws.mu.
func (ws *waiters) finish(w *waiter, o outcome) {
	if w.done != nil {
		return
	}
	w.done = &o
	ws.forget(w)
	w.signal()
}

func (w *waiter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// oldest is the request the chat's running turn answers; the caller holds ws.mu.
func (ws *waiters) oldest(chat string) *waiter {
	if list := ws.byChat[chat]; len(list) > 0 {
		return list[0]
	}
	return nil
}

// answer ends the requests whose messages a reply answers; it reports how many.
func (ws *waiters) answer(ids []string, text string) int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	n := 0
	for _, id := range ids {
		if w, ok := ws.byID[id]; ok {
			ws.finish(w, outcome{reply: text})
			n++
		}
	}
	return n
}

// answerOldest ends the oldest request of a chat with a reply that names no
// message. A message tool send answers one request per turn: later sends of
// that turn are not the next request's answer.
func (ws *waiters) answerOldest(chat, turn, text string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if turn != "" && ws.answeredBy[chat] == turn {
		return false
	}
	w := ws.oldest(chat)
	if w == nil {
		return false
	}
	if turn != "" {
		ws.answeredBy[chat] = turn
	}
	ws.finish(w, outcome{reply: text})
	return true
}

// answerOldestBut ends the oldest request of a chat other than except.
func (ws *waiters) answerOldestBut(chat string, except *waiter, text string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, w := range ws.byChat[chat] {
		if w != except {
			ws.finish(w, outcome{reply: text})
			return true
		}
	}
	return false
}

// answerOne ends one request with a reply given while it was publishing.
func (ws *waiters) answerOne(w *waiter, text string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.finish(w, outcome{reply: text})
}

// fail ends a request with an error (504, or the server stopping).
func (ws *waiters) fail(w *waiter, e apiError) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.finish(w, outcome{err: &e})
}

// close ends every waiting request, and every later one, with an error.
func (ws *waiters) close(e apiError) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.closed = &e
	for _, w := range ws.byID {
		ws.finish(w, outcome{err: &e})
	}
}

// streamTo hands a stream event to the streaming request the chat's turn
// answers. A non-streaming oldest request takes nothing: the turn is its.
func (ws *waiters) streamTo(chat string, apply func(*streamText) string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.oldest(chat)
	if w == nil || !w.stream {
		return
	}
	if out := apply(&w.text); out != "" {
		w.pending = append(w.pending, out)
		w.signal()
	}
}

// take returns what a request has to write: stream text, and its outcome once ended.
func (ws *waiters) take(w *waiter) ([]string, *outcome) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	p := w.pending
	w.pending = nil
	return p, w.done
}

// outcome is how a request ended, nil while it waits.
func (ws *waiters) outcome(w *waiter) *outcome {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return w.done
}

// final is what a streaming request writes for its reply, given what it streamed.
func (ws *waiters) final(w *waiter, reply string) string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return w.text.Final(reply)
}

// count is how many requests wait.
func (ws *waiters) count() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.byID)
}
