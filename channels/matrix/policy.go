package matrix

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"maunium.net/go/mautrix/id"
)

// memberCounts caches each room's joined members: a room of two is a DM
// (nanobot's rule). A membership event in the room's sync forgets it.
type memberCounts struct {
	mu     sync.Mutex
	byRoom map[string]int
}

func newMemberCounts() *memberCounts { return &memberCounts{byRoom: map[string]int{}} }

func (m *memberCounts) forget(room string) {
	m.mu.Lock()
	delete(m.byRoom, room)
	m.mu.Unlock()
}

// isDM tells whether the room has at most two joined members. When the
// homeserver cannot say, the room is taken for a group: the stricter policy.
func (c *Channel) isDM(ctx context.Context, room string) bool {
	c.members.mu.Lock()
	n, ok := c.members.byRoom[room]
	c.members.mu.Unlock()
	if !ok {
		cctx, cancel := callCtx(ctx)
		resp, err := c.api().JoinedMembers(cctx, id.RoomID(room))
		cancel()
		if err != nil {
			c.Log.Warn("matrix room members unknown; treating the room as a group", "room", room, "error", err)
			return false
		}
		n = len(resp.Joined)
		c.members.mu.Lock()
		c.members.byRoom[room] = n
		c.members.mu.Unlock()
	}
	return n <= 2
}

// mentioned tells whether a message mentions the bot. A client that sets
// m.mentions says so there (the intentional mentions of the spec, and all
// nanobot reads); for older clients the bot's user id or display name in
// the body counts.
func (c *Channel) mentioned(m message) bool {
	me, name := c.identity()
	if mn := m.Mentions; mn != nil {
		return mn.Has(me) || (c.cfg.AllowRoomMentions && mn.Room)
	}
	if strings.Contains(m.Body, string(me)) {
		return true
	}
	return name != "" && namePattern(name).MatchString(m.Body)
}

// namePattern matches a display name as a word, case-insensitively.
func namePattern(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|[^\pL\pN_])` + regexp.QuoteMeta(name) + `($|[^\pL\pN_])`)
}

// stripMention drops the "Name: " or "@bot:server: " a client puts in
// front of a message addressed to the bot.
func (c *Channel) stripMention(body string) string {
	me, name := c.identity()
	for _, prefix := range []string{string(me), name} {
		if prefix == "" || len(body) < len(prefix) || !strings.EqualFold(body[:len(prefix)], prefix) {
			continue
		}
		rest := strings.TrimLeft(body[len(prefix):], ":, ")
		if rest != "" && rest != body[len(prefix):] {
			return rest
		}
	}
	return body
}
