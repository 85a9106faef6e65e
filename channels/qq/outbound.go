package qq

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Message types of POST .../messages (QQ Bot API, "发送消息").
const (
	msgTypeText     = 0
	msgTypeMarkdown = 2
	msgTypeMedia    = 7
)

// maxMessageRunes is the text the channel puts in one QQ message.
const maxMessageRunes = 2000

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return maxMessageRunes }

// SendPart implements channels.PartSender: every part is a passive reply
// to the user's message (msg_id) with a msg_seq of its own.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	if !validID(r.Route.ChatID) {
		return "", &channels.SendError{Err: fmt.Errorf("qq chat %q is not an openid", r.Route.ChatID), Permanent: true}
	}
	key := r.Key() + "#" + strconv.Itoa(p.Index)
	if r.Key() == "" {
		key = "" // never retried: any fresh seq does
	}
	if p.Media != "" {
		return c.sendMedia(ctx, r.Route, key, p.Media)
	}
	return c.postText(ctx, r.Route, key, p.Text)
}

// postText sends text as msgFormat says: plain text, or QQ's Markdown.
func (c *Channel) postText(ctx context.Context, route protocol.Route, key, text string) (string, error) {
	if c.cfg.MsgFormat == formatMarkdown {
		return c.post(ctx, route, key, map[string]any{"msg_type": msgTypeMarkdown,
			"markdown": map[string]string{"content": strings.TrimSpace(text)}})
	}
	return c.post(ctx, route, key, map[string]any{"msg_type": msgTypeText, "content": format.Markdown(text)})
}

// maxSeqTries bounds the msg_seqs tried for one part: QQ takes only a
// handful of replies to one msg_id anyway.
const maxSeqTries = 8

// post sends one message to the chat; a reply carries the user's msg_id
// and the next msg_seq for it. A retried part keeps its msg_seq, so QQ
// drops the copy if the first attempt got through; a fresh msg_seq QQ
// already saw was used before this process (a restart, another gateway)
// and the next one is tried.
func (c *Channel) post(ctx context.Context, route protocol.Route, key string, body map[string]any) (string, error) {
	path := chatPath(c.isGroup(route.ChatID), route.ChatID) + "/messages"
	for try := 0; ; try++ {
		reused := false
		if route.ReplyTo != "" {
			seq, again := c.seqs.next(route.ReplyTo, key, try > 0)
			body["msg_id"], body["msg_seq"], reused = route.ReplyTo, seq, again
		}
		var sent struct {
			ID string `json:"id"`
		}
		err := c.api.Call(ctx, http.MethodPost, path, body, &sent)
		switch {
		case err == nil:
			return sent.ID, nil
		case !isDuplicateSeq(err):
			return "", sendError(err)
		case reused:
			return "", nil // an earlier attempt of this part got through
		case try+1 >= maxSeqTries:
			return "", &channels.SendError{Err: err, Permanent: true}
		}
	}
}

// isGroup: the chat was seen as a group (replies to users are the default).
func (c *Channel) isGroup(chat string) bool { return c.groups.Has(chat) }

// chatPath is the REST path of a chat: a group, or a user's C2C chat.
func chatPath(group bool, chat string) string {
	if group {
		return "/v2/groups/" + chat
	}
	return "/v2/users/" + chat
}

// seqs hands out msg_seq per replied-to msg_id: QQ takes a second reply to
// one msg_id only with a new msg_seq, and drops a repeated one.
type seqs struct {
	mu   sync.Mutex
	byID map[string]*seqRun
}

type seqRun struct {
	last  int
	parts map[string]int // a part's key → the seq it was given
	at    time.Time
}

// seqKeep is how long a msg_id's seqs are kept: longer than QQ accepts passive replies.
const seqKeep = 2 * time.Hour

func newSeqs() *seqs { return &seqs{byID: map[string]*seqRun{}} }

// next is the seq of the part key ("" for a fresh one) of a reply to
// msgID, and whether this part was given it before; fresh skips the one it
// had (QQ had seen it).
func (s *seqs) next(msgID, key string, fresh bool) (seq int, reused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if len(s.byID) > 1024 {
		for id, r := range s.byID {
			if now.Sub(r.at) > seqKeep {
				delete(s.byID, id)
			}
		}
	}
	r := s.byID[msgID]
	if r == nil {
		r = &seqRun{parts: map[string]int{}}
		s.byID[msgID] = r
	}
	r.at = now
	if n, ok := r.parts[key]; ok && key != "" && !fresh {
		return n, true
	}
	r.last++
	if key != "" {
		r.parts[key] = r.last
	}
	return r.last, false
}
