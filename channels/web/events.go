package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/protocol"
)

// event is one Server-Sent Event: a name and a JSON body.
type event struct {
	Name string
	Data any
}

// streamEvent is a piece of a running turn (delta, reset, hint, end, injected).
type streamEvent struct {
	Turn      string   `json:"turn"`
	Iteration int      `json:"iteration"`
	Text      string   `json:"text,omitempty"`
	IDs       []string `json:"ids,omitempty"`
}

// replyEvent is a delivered reply.
type replyEvent struct {
	ID         string   `json:"id"`
	Turn       string   `json:"turn"`
	Text       string   `json:"text"`
	HTML       string   `json:"html"` // Text rendered (markdown.WebHTML): the page shows it as is
	MessageIDs []string `json:"message_ids,omitempty"`
	Kind       string   `json:"kind,omitempty"`
	Media      []string `json:"media,omitempty"`
	// StopReason tells a command's answer ("command") from a turn's.
	StopReason string `json:"stop_reason,omitempty"`
	// Approval is the request an "approval" reply asks about, with its buttons.
	Approval *approvalView `json:"approval,omitempty"`
}

// approvalView is an approval request as the page draws it.
type approvalView struct {
	ID      string       `json:"id"`
	Call    string       `json:"call"`
	Text    string       `json:"text"`
	HTML    string       `json:"html"`
	Buttons []buttonView `json:"buttons"`
	// AskedAt is when the turn asked: the page says "waiting for approval since …".
	AskedAt time.Time `json:"asked_at,omitzero"`
}

// buttonView is one answer: a click sends Command as the user's message.
type buttonView struct {
	Label   string `json:"label"`
	Command string `json:"command"`
	Verdict string `json:"verdict"`
}

// viewOf is how the page shows a request (nil: none).
func viewOf(req *protocol.ApprovalRequest) *approvalView {
	if req == nil || req.ID == "" {
		return nil
	}
	v := &approvalView{ID: req.ID, Call: req.Call(), Text: req.Text(), HTML: markdown.WebHTML(req.Text()), AskedAt: req.AskedAt}
	for _, b := range channels.ApprovalButtons(*req) {
		v.Buttons = append(v.Buttons, buttonView{Label: b.Label, Command: b.Command, Verdict: b.Verdict})
	}
	return v
}

// clientBuffer is how many events a slow page may lag behind before its
// stream is dropped (it reconnects and reloads from the journal).
const clientBuffer = 512

// seenReplies bounds the reply IDs remembered to drop retried deliveries.
const seenReplies = 1024

// client is one open event stream.
type client struct {
	chat string
	out  chan event
	gone chan struct{} // closed when the stream must end
	once sync.Once
}

func (cl *client) end() { cl.once.Do(func() { close(cl.gone) }) }

// clients are the open streams, by chat.
type clients struct {
	mu     sync.Mutex
	byChat map[string]map[*client]bool
	seen   *channels.RecentKeys // reply IDs delivered: a retried delivery is shown once
	closed bool
}

func newClients() *clients {
	return &clients{byChat: map[string]map[*client]bool{}, seen: channels.NewRecentKeys(seenReplies)}
}

// add opens a stream on a chat; nil when the server is stopping.
func (cs *clients) add(chat string) *client {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return nil
	}
	cl := &client{chat: chat, out: make(chan event, clientBuffer), gone: make(chan struct{})}
	if cs.byChat[chat] == nil {
		cs.byChat[chat] = map[*client]bool{}
	}
	cs.byChat[chat][cl] = true
	return cl
}

func (cs *clients) remove(cl *client) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.byChat[cl.chat], cl)
	if len(cs.byChat[cl.chat]) == 0 {
		delete(cs.byChat, cl.chat)
	}
	cl.end()
}

// broadcast hands an event to every stream of a chat without waiting: a
// stream too far behind is ended rather than holding the model activity up.
func (cs *clients) broadcast(chat string, ev event) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for cl := range cs.byChat[chat] {
		select {
		case cl.out <- ev:
		default:
			cl.end()
		}
	}
}

// count is how many streams a chat has open.
func (cs *clients) count(chat string) int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.byChat[chat])
}

// firstDelivery reports whether a reply ID is new, remembering it.
func (cs *clients) firstDelivery(id string) bool { return !cs.seen.Add(id) }

// closeAll ends every stream, and refuses new ones.
func (cs *clients) closeAll() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	for _, set := range cs.byChat {
		for cl := range set {
			cl.end()
		}
	}
}

// sse writes events to one response.
type sse struct {
	w     http.ResponseWriter
	flush func()
}

func newSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // a reverse proxy must not hold events back
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, flush: func() {}}
	if f, ok := w.(http.Flusher); ok {
		s.flush = f.Flush
	}
	s.flush()
	return s
}

func (s *sse) send(ev event) error {
	b, err := json.Marshal(ev.Data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", ev.Name, err)
	}
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", ev.Name, b); err != nil {
		return fmt.Errorf("write %s event: %w", ev.Name, err)
	}
	s.flush()
	return nil
}

// comment keeps an idle stream open through proxies.
func (s *sse) comment() error {
	if _, err := fmt.Fprint(s.w, ": keep-alive\n\n"); err != nil {
		return err
	}
	s.flush()
	return nil
}
