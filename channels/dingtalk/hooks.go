package dingtalk

import (
	"net/url"
	"strings"
	"sync"
	"time"
)

// hookMargin is how long before its expiry a sessionWebhook is no longer
// used: a reply must not race its end.
const hookMargin = 5 * time.Second

// sessionHook is how to answer one message: its sessionWebhook until it
// expires, and who wrote it (the group reply's header names them).
type sessionHook struct {
	url     string
	expires time.Time
	nick    string
	group   bool
}

// sessionHooks remember the hooks of the last n messages, by msgId. They
// live in memory only: another gateway, or this one after a restart,
// answers through the robot send API instead.
type sessionHooks struct {
	mu    sync.Mutex
	n     int
	hooks map[string]sessionHook
	order []string
}

func newSessionHooks(n int) *sessionHooks {
	return &sessionHooks{n: n, hooks: map[string]sessionHook{}}
}

// put remembers m's hook, forgetting the oldest beyond n.
func (s *sessionHooks) put(m robotMessage) {
	h := sessionHook{url: m.SessionWebhook, nick: m.SenderNick, group: m.isGroup()}
	if m.SessionWebhookExpiredTime > 0 {
		h.expires = time.UnixMilli(m.SessionWebhookExpiredTime)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.hooks[m.MsgID]; !ok {
		s.order = append(s.order, m.MsgID)
	}
	s.hooks[m.MsgID] = h
	for len(s.order) > s.n {
		delete(s.hooks, s.order[0])
		s.order = s.order[1:]
	}
}

// get is the hook of the message msgID, if remembered.
func (s *sessionHooks) get(msgID string) (sessionHook, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.hooks[msgID]
	return h, ok
}

// usable: the hook is there, valid a while longer, and on DingTalk's host
// (or apiBase's) — a payload's URL is not posted to anywhere else.
func (h sessionHook) usable(now time.Time, oapi string) bool {
	if h.url == "" || h.expires.IsZero() || !now.Add(hookMargin).Before(h.expires) {
		return false
	}
	u, err := url.Parse(h.url)
	base, berr := url.Parse(oapi)
	if err != nil || berr != nil {
		return false
	}
	return strings.EqualFold(u.Host, base.Host) && u.Scheme == base.Scheme
}
