package signalpeer

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// keepAlive is signal-cli's interval between ":" comments.
const keepAlive = 15 * time.Second

// serveEvents is GET /api/v1/events: first the kept events after the
// Last-Event-ID (all for an unknown one, none without), then the new ones.
func (p *Peer) serveEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	flusher, _ := w.(http.Flusher)
	last := r.Header.Get("Last-Event-ID")
	stream, closed := make(chan event, maxEvents), make(chan struct{})
	p.mu.Lock()
	p.connections++
	p.lastIDs = append(p.lastIDs, last)
	var backlog []event
	if last != "" {
		after := int64(0)
		if n, err := strconv.ParseInt(strings.TrimPrefix(last, p.prefix), 10, 64); err == nil && strings.HasPrefix(last, p.prefix) && !p.forget {
			after = n
		}
		for _, ev := range p.events {
			if ev.seq > after {
				backlog = append(backlog, ev)
			}
		}
	}
	p.forget = false
	p.streams[stream] = closed
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	write := func(ev event) bool {
		_, err := fmt.Fprintf(w, "id:%s%d\nevent:receive\ndata:%s\n\n", p.prefix, ev.seq, ev.data)
		flusher.Flush()
		return err == nil
	}
	for _, ev := range backlog {
		if !write(ev) {
			return
		}
	}
	flusher.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	defer func() {
		p.mu.Lock()
		delete(p.streams, stream)
		p.mu.Unlock()
	}()
	for {
		select {
		case <-closed:
			return
		case <-r.Context().Done():
			return
		case ev := <-stream:
			if !write(ev) {
				return
			}
		case <-tick.C:
			if _, err := fmt.Fprint(w, ":\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}
