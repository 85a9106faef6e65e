package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// maxFound bounds a search's answer (newest first).
const maxFound = 50

// forkedFrom is the metadata key a fork keeps its origin under.
const forkedFrom = "forked_from"

// Metadata keys the sidebar sets: a name given by hand (session.Title reads it) and archived.
const (
	titleKey    = "title"
	archivedKey = "archived"
)

// conversation is one chat session of any channel in the sidebar.
type conversation struct {
	Key     string `json:"key"`
	Channel string `json:"channel"`
	Chat    string `json:"chat"`
	Title   string `json:"title"`
	Updated string `json:"updated"`
	// Found is the last message that matched a search.
	Found string `json:"found,omitempty"`
}

func conversationOf(key, title string, modified time.Time) (conversation, bool) {
	ch, chatID, err := protocol.SplitSessionKey(key)
	if err != nil {
		return conversation{}, false
	}
	return conversation{Key: key, Channel: ch, Chat: chatID, Title: chat.Preview(title, 80), Updated: modified.UTC().Format(time.RFC3339)}, true
}

// conversations lists the chat sessions of every channel, newest first,
// the archived ones or the others; with a query, those whose visible
// messages contain it (session.Searcher), archived or not.
func (c *Channel) conversations(ctx context.Context, query string, archived bool) ([]conversation, error) {
	out := []conversation{}
	if query != "" {
		s, ok := c.store.(session.Searcher)
		if !ok {
			return nil, fmt.Errorf("this journal (%T) cannot be searched", c.store)
		}
		found, err := s.Search(query, "", maxFound)
		if err != nil {
			return nil, fmt.Errorf("search the sessions: %w", err)
		}
		for _, m := range found {
			if cv, ok := conversationOf(m.Key, m.Title, m.Modified); ok {
				if n := len(m.Messages); n > 0 {
					cv.Found = chat.Preview(m.Messages[n-1].Content, 120)
				}
				out = append(out, cv)
			}
		}
		return out, nil
	}
	infos, err := c.store.SessionsOfKind("")
	if err != nil {
		return nil, fmt.Errorf("list the sessions: %w", err)
	}
	session.NewestFirst(infos)
	for _, in := range infos {
		if len(out) == maxListed {
			break
		}
		s, err := c.store.Load(ctx, in.Key)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", in.Key, err)
		}
		if isArchived, _ := s.Metadata[archivedKey].(bool); isArchived != archived {
			continue
		}
		if cv, ok := conversationOf(in.Key, session.Title(s.Metadata, session.VisibleMessages(s.Messages)), in.Modified); ok {
			out = append(out, cv)
		}
	}
	return out, nil
}

// forkRequest is the body of /api/fork: a session and the journal index of
// the message the fork ends with.
type forkRequest struct {
	Session string `json:"session"`
	Index   int    `json:"index"`
}

// fork starts a web session whose journal is a copy of another's up to a
// message; the original is only read.
func (c *Channel) fork(w http.ResponseWriter, r *http.Request) {
	var req forkRequest
	if !readSessionRequest(w, r, &req, &req.Session, `{"session", "index"}`) {
		return
	}
	key, err := c.forkAt(r.Context(), req.Session, req.Index)
	var bad badTarget
	switch {
	case errors.As(err, &bad):
		writeError(w, http.StatusBadRequest, err.Error())
	case err != nil:
		c.log.Error("forking a session failed", "session", req.Session, "index", req.Index, "error", err)
		writeError(w, http.StatusInternalServerError, "could not fork the conversation: "+err.Error())
	default:
		_, chatID, _ := protocol.SplitSessionKey(key)
		writeJSON(w, http.StatusOK, map[string]string{"session": key, "chat": chatID})
	}
}

// badTarget is a message or session a request names that the journal does not have.
type badTarget struct{ error }

func (c *Channel) forkAt(ctx context.Context, from string, index int) (string, error) {
	src, err := c.store.Load(ctx, from)
	if err != nil {
		return "", fmt.Errorf("load %s: %w", from, err)
	}
	if index < 0 || index >= len(src.Messages) {
		return "", badTarget{fmt.Errorf("%s has no message %d (it has %d)", from, index, len(src.Messages))}
	}
	if m := src.Messages[index]; m.Role != chat.RoleUser && m.Role != chat.RoleAssistant {
		return "", badTarget{fmt.Errorf("message %d of %s is a %s message: fork at what was said", index, from, m.Role)}
	}
	key := protocol.SessionKey(Name, newID(6))
	msgs := append([]chat.Message(nil), src.Messages[:index+1]...)
	err = c.store.Update(ctx, key, func(s *session.Session) error {
		if len(s.Messages) > 0 {
			return fmt.Errorf("%s exists already", key)
		}
		s.Messages = msgs
		s.LastConsolidated = min(src.LastConsolidated, len(msgs))
		if s.Metadata == nil {
			s.Metadata = map[string]any{}
		}
		s.Metadata[forkedFrom] = from
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("write the fork %s: %w", key, err)
	}
	c.log.Info("forked a session", "from", from, "at", index, "session", key)
	return key, nil
}

// sessionChange is the body of /api/session: a new name ("" gives back the
// first line as the name) and/or archived or not.
type sessionChange struct {
	Session  string  `json:"session"`
	Title    *string `json:"title"`
	Archived *bool   `json:"archived"`
}

// changeSession renames or (un)archives a chat; its messages stay as they are.
func (c *Channel) changeSession(w http.ResponseWriter, r *http.Request) {
	var req sessionChange
	if !readSessionRequest(w, r, &req, &req.Session, `{"session", "title", "archived"}`) {
		return
	}
	if req.Title == nil && req.Archived == nil {
		writeError(w, http.StatusBadRequest, "nothing to change: give title and/or archived")
		return
	}
	err := c.store.Update(r.Context(), req.Session, func(s *session.Session) error {
		if len(s.Messages) == 0 {
			return badTarget{fmt.Errorf("no session %s", req.Session)}
		}
		if s.Metadata == nil {
			s.Metadata = map[string]any{}
		}
		if req.Title != nil {
			if t := chat.Cut(strings.TrimSpace(*req.Title), session.TitleChars); t != "" {
				s.Metadata[titleKey] = t
			} else {
				delete(s.Metadata, titleKey)
			}
		}
		if req.Archived != nil {
			if *req.Archived {
				s.Metadata[archivedKey] = true
			} else {
				delete(s.Metadata, archivedKey)
			}
		}
		return nil
	})
	var bad badTarget
	switch {
	case errors.As(err, &bad):
		writeError(w, http.StatusNotFound, bad.Error())
	case err != nil:
		c.log.Error("changing a session failed", "session", req.Session, "error", err)
		writeError(w, http.StatusInternalServerError, "could not change the session: "+err.Error())
	default:
		writeJSON(w, http.StatusOK, map[string]string{"session": req.Session})
	}
}

// readSessionRequest reads a same-origin JSON body into req whose session
// field is *key, and checks the key; false when it answered an error.
func readSessionRequest(w http.ResponseWriter, r *http.Request, req any, key *string, shape string) bool {
	return readRequest(w, r, req, shape) && validSession(w, *key)
}

// readRequest reads a same-origin JSON body of that shape into req; false when it answered an error.
func readRequest(w http.ResponseWriter, r *http.Request, req any, shape string) bool {
	if err := channels.ReadJSON(w, r, maxBody, req); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not JSON "+shape+": "+err.Error())
		return false
	}
	return true
}

// validSession answers 400 unless key is a session key (channel:chat).
func validSession(w http.ResponseWriter, key string) bool {
	if _, _, err := protocol.SplitSessionKey(key); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("session %q: %v", key, err))
		return false
	}
	return true
}
