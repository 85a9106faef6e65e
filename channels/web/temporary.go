package web

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/protocol"
)

// temporaryPrefix starts the chat ID of a temporary chat (the page makes them).
const temporaryPrefix = "tmp-"

// temporaryCommands are the commands a temporary chat takes (nanobot's).
var temporaryCommands = []string{"/model", "/stop"}

// stopWait bounds how long a discard waits for the chat's turn to stop.
const stopWait = 30 * time.Second

func isTemporary(chatID string) bool { return strings.HasPrefix(chatID, temporaryPrefix) }

// temporaryRefusal is why a temporary chat does not take text ("" when it does).
func temporaryRefusal(text string) string {
	name, _, ok := protocol.ParseCommand(text)
	if !ok {
		return ""
	}
	for _, c := range temporaryCommands {
		if name == c {
			return ""
		}
	}
	return "a temporary chat takes only " + strings.Join(temporaryCommands, " and ")
}

// discard answers POST /api/discard {"chat"}: a temporary chat's turn is
// stopped and its session deleted. The page calls it when the chat is left
// or closed (a keepalive request), so the deletion outlives the request.
func (c *Channel) discard(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Chat string `json:"chat"`
	}
	if !readRequest(w, r, &req, `{"chat"}`) {
		return
	}
	if !chatIDs.MatchString(req.Chat) || !isTemporary(req.Chat) {
		writeError(w, http.StatusBadRequest, "only a temporary chat ("+temporaryPrefix+"…) is discarded")
		return
	}
	key := protocol.SessionKey(Name, req.Chat)
	if c.turnNow(r.Context(), key).Running {
		if err := c.publishMessage(r.Context(), message("web-"+newID(8), req.Chat, "/stop")); err != nil {
			writeError(w, http.StatusServiceUnavailable, "the chat's turn could not be stopped: "+err.Error())
			return
		}
	}
	go c.deleteWhenStopped(key)
	writeJSON(w, http.StatusAccepted, map[string]string{"session": key})
}

// deleteWhenStopped deletes a discarded chat's session once no turn of it runs.
func (c *Channel) deleteWhenStopped(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), stopWait)
	defer cancel()
	for c.turnNow(ctx, key).Running {
		select {
		case <-ctx.Done():
			c.log.Warn("a discarded temporary chat's turn did not stop: the session stays until gc removes it", "session", key)
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err := c.store.Delete(key); err != nil {
		c.log.Error("deleting a discarded temporary chat failed", "session", key, "error", err)
		return
	}
	c.log.Info("temporary chat discarded", "session", key)
}
