package whatsapp

import (
	"strings"
	"sync"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// lidMap maps LIDs to phone numbers: channels.whatsapp.lidMappings, then
// what messages carrying both addresses taught (as nanobot does).
type lidMap struct {
	mu sync.Mutex
	m  map[string]string
}

func newLIDMap(configured map[string]string) *lidMap {
	l := &lidMap{m: map[string]string{}}
	for lid, phone := range configured {
		lid, _, _ = strings.Cut(strings.TrimSpace(lid), "@")
		if d := phoneDigits(phone); lid != "" && d != "" {
			l.m[lid] = d
		}
	}
	return l
}

func (l *lidMap) learn(lid, phone string) {
	if lid == "" || phone == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[lid] = phone
}

func (l *lidMap) phone(lid string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[lid]
}

// quoteCache keeps the last messages received, so a reply quotes the
// user's message with its text (ContextInfo.QuotedMessage) as WhatsApp
// shows it. A reply to a message no longer here quotes it by id alone.
type quoteCache struct {
	mu    sync.Mutex
	max   int
	order []string
	byID  map[string]quoted
}

type quoted struct {
	participant types.JID
	message     *waE2E.Message
}

func newQuoteCache(max int) *quoteCache {
	return &quoteCache{max: max, byID: map[string]quoted{}}
}

func (q *quoteCache) put(id string, participant types.JID, m *waE2E.Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.byID[id]; !ok {
		q.order = append(q.order, id)
	}
	q.byID[id] = quoted{participant, m}
	for len(q.order) > q.max {
		delete(q.byID, q.order[0])
		q.order = q.order[1:]
	}
}

func (q *quoteCache) get(id string) (quoted, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	v, ok := q.byID[id]
	return v, ok
}
