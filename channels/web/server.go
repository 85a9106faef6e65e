package web

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

//go:embed static
var static embed.FS

// cookieName carries the token for the page's own requests once it is opened with ?token=.
const cookieName = "nanobot_web_token"

// maxBody bounds a request body; a message is text.
const maxBody = 1 << 20

// keepAlive is how often an idle event stream gets a comment.
const keepAlive = 15 * time.Second

// chatIDs are what the page makes for a new session; nothing else gets in a key.
var chatIDs = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ServeHTTP routes the page and its API. With a token set every request
// needs it: "Authorization: Bearer", ?token=, or the cookie the page got.
func (c *Channel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.authorized(w, r) {
		writeError(w, http.StatusUnauthorized, "this chat needs its token: open the URL the gateway printed (…/?token=…)")
		return
	}
	method, handle := c.route(r.URL.Path)
	if handle == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no %s %s here", r.Method, r.URL.Path))
		return
	}
	if !allow(w, r, method) {
		return
	}
	// Every API call, read or write, from this page's origin only: a page elsewhere gets nothing through it.
	if strings.HasPrefix(r.URL.Path, "/api/") && crossOrigin(w, r) {
		return
	}
	handle(w, r)
}

// route names the one method a path takes and its handler (nil: no such path).
func (c *Channel) route(path string) (string, http.HandlerFunc) {
	get, post := http.MethodGet, http.MethodPost
	switch path {
	case "/", "/index.html", "/chat.js", "/turn.js", "/live.js", "/meter.js", "/attach.js", "/history.js", "/keys.js", "/temporary.js", "/chat.css", "/schedules.html", "/schedules.js", "/memory.html", "/memory.js":
		return get, c.asset
	case "/api/info":
		return get, func(w http.ResponseWriter, _ *http.Request) { c.info(w) }
	case "/api/sessions":
		return get, c.listSessions
	case "/api/history":
		return get, c.showHistory
	case "/api/turn":
		return get, c.showTurn
	case "/api/media":
		return get, c.serveMedia
	case "/api/context":
		return get, c.showContext
	case "/api/memory":
		return get, c.showMemory
	case "/api/subagents":
		return get, c.listSubagents
	case "/api/subagent":
		return get, c.showSubagent
	case "/api/goals":
		return get, c.listGoals
	case "/api/approvals":
		return get, c.listApprovals
	case "/api/schedules":
		return get, c.listSchedules
	case "/api/schedule":
		return post, c.actOnSchedule
	case "/api/session":
		return post, c.changeSession
	case "/api/fork":
		return post, c.fork
	case "/api/events":
		return get, c.events
	case "/api/send":
		return post, func(w http.ResponseWriter, r *http.Request) { c.send(w, r, "") }
	case "/api/discard":
		return post, c.discard
	case "/api/withdraw":
		return post, c.withdraw
	case "/api/stop":
		return post, func(w http.ResponseWriter, r *http.Request) { c.send(w, r, "/stop") }
	}
	return "", nil
}

// authorized checks the token; a page opened with a good ?token= gets a
// cookie, so its scripts, styles and event stream carry it.
func (c *Channel) authorized(w http.ResponseWriter, r *http.Request) bool {
	if c.token == "" {
		return true
	}
	if scheme, key, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") && c.tokenIs(strings.TrimSpace(key)) {
		return true
	}
	if q := r.URL.Query().Get("token"); q != "" && c.tokenIs(q) {
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		return true
	}
	if ck, err := r.Cookie(cookieName); err == nil && c.tokenIs(ck.Value) {
		return true
	}
	return false
}

func (c *Channel) tokenIs(s string) bool {
	return subtle.ConstantTimeCompare([]byte(s), []byte(c.token)) == 1
}

func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s (use %s)", r.Method, r.URL.Path, method))
	return false
}

func (c *Channel) asset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "" {
		name = "index.html"
	}
	b, err := fs.ReadFile(static, "static/"+name)
	if err != nil {
		writeError(w, http.StatusNotFound, "no "+name)
		return
	}
	types := map[string]string{".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	w.Header().Set("Content-Type", types[name[strings.LastIndex(name, "."):]])
	w.Header().Set("Cache-Control", "no-cache")
	// The page runs only its own script and style: nothing the model writes can load or run anything.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(b)
}

// info tells the page how to link a turn to the Temporal Web UI.
func (c *Channel) info(w http.ResponseWriter) {
	c.mu.Lock()
	ui, ns := c.uiURL, c.ns
	c.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"temporal_ui": ui, "namespace": ns, "max_file": maxFile, "max_files": maxFiles})
}

func (c *Channel) listSessions(w http.ResponseWriter, r *http.Request) {
	list, err := c.conversations(r.Context(), strings.TrimSpace(r.URL.Query().Get("q")), r.URL.Query().Get("archived") == "1")
	if err != nil {
		c.log.Error("listing sessions failed", "error", err)
		writeError(w, http.StatusInternalServerError, "could not list the sessions: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": list})
}

// showHistory answers a conversation from the journal, with where its turn
// is now: a web chat by ?chat=, or any channel's session by ?session=key
// (the page shows another channel's read-only: its replies go there).
func (c *Channel) showHistory(w http.ResponseWriter, r *http.Request) {
	key, ok := sessionParam(w, r)
	if !ok {
		return
	}
	before, limit, err := pageParams(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	items, err := c.history(r.Context(), key)
	if err != nil {
		c.log.Error("reading a web session failed", "session", key, "error", err)
		writeError(w, http.StatusInternalServerError, "could not read the conversation: "+err.Error())
		return
	}
	items, more := page(items, before, limit)
	render(items)
	writeJSON(w, http.StatusOK, map[string]any{
		"session": key, "web": strings.HasPrefix(key, Name+":"), "messages": items, "more": more,
		"turn": c.turnNow(r.Context(), key), "inspect": c.inspectBase(key),
	})
}

// inspectBase is the Web UI address of the session's turn workflow; a run ID completes it.
func (c *Channel) inspectBase(key string) string {
	return c.inspectWorkflow(c.instance.TurnWorkflowID(key))
}

// inspectWorkflow is the Web UI address of a workflow ("" without a UI); a run ID completes it.
func (c *Channel) inspectWorkflow(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.uiURL == "" {
		return ""
	}
	return c.uiURL + "/namespaces/" + url.PathEscape(c.ns) + "/workflows/" + url.PathEscape(id) + "/"
}

// turnNow asks where the session's turn is; not knowing is not an error for the page.
func (c *Channel) turnNow(ctx context.Context, key string) TurnNow {
	c.mu.Lock()
	t := c.turns
	c.mu.Unlock()
	if t == nil {
		return TurnNow{}
	}
	now, err := t.Now(ctx, key)
	if err != nil {
		c.log.Warn("could not ask where a turn is", "session", key, "error", err)
	}
	return now
}

// events streams a chat's turn to the page: first where the turn is now,
// then deltas, hints, injections and replies as they come.
func (c *Channel) events(w http.ResponseWriter, r *http.Request) {
	chatID, ok := chatParam(w, r.URL.Query().Get("chat"))
	if !ok {
		return
	}
	cl := c.clients.add(chatID)
	if cl == nil {
		writeError(w, http.StatusServiceUnavailable, "the gateway is stopping")
		return
	}
	defer c.clients.remove(cl)
	s := newSSE(w)
	key := protocol.SessionKey(Name, chatID)
	var pushed livePusher
	now := c.turnNow(r.Context(), key)
	pushed.changed(now)
	if s.send(event{Name: "turn", Data: now}) != nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	changes := c.watchTurn(r.Context(), key, &pushed)
	for {
		select {
		case ev := <-cl.out:
			if s.send(ev) != nil {
				return
			}
		case now := <-changes: // where the turn is, pushed as it changes: a step, a retry, a wait, a queue
			if s.send(event{Name: "live", Data: now}) != nil {
				return
			}
		case <-tick.C:
			if s.comment() != nil {
				return
			}
		case <-cl.gone:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// message is what the page says in chatID, as the bus takes it; a
// temporary chat's is a temporary turn in a session of its own (under
// unifiedSession too).
func message(id, chatID, text string) protocol.Inbound {
	msg := protocol.Inbound{
		ID: id, Content: text, SentAt: time.Now(),
		Route: protocol.Route{Channel: Name, ChatID: chatID, SenderID: senderID},
	}
	if isTemporary(chatID) {
		msg.Kind, msg.Scope = protocol.TemporaryTurn, protocol.OwnChat()
	}
	return msg
}

// publishMessage hands msg to the bus the channel was started with.
func (c *Channel) publishMessage(ctx context.Context, msg protocol.Inbound) error {
	c.mu.Lock()
	publish := c.publish
	c.mu.Unlock()
	return publish(ctx, msg, nil)
}

// sendRequest is the body of /api/send and /api/stop.
type sendRequest struct {
	Chat string `json:"chat"`
	Text string `json:"text"`
}

// send publishes a message typed in the page (or, for /api/stop, /stop);
// /api/send also takes a voice note as multipart/form-data (readForm).
func (c *Channel) send(w http.ResponseWriter, r *http.Request, fixed string) {
	id := "web-" + newID(8)
	req, media, status, err := c.readSend(w, r, id, fixed == "")
	if err != nil {
		writeError(w, status, err.Error())
		return
	}
	refuse := func(status int, msg string) {
		removeAll(media) // nothing published: nothing kept
		writeError(w, status, msg)
	}
	if !chatIDs.MatchString(req.Chat) {
		refuse(http.StatusBadRequest, chatProblem(req.Chat))
		return
	}
	chatID, text := req.Chat, req.Text
	if fixed != "" {
		text = fixed
	}
	if strings.TrimSpace(text) == "" && len(media) == 0 {
		refuse(http.StatusBadRequest, "the message is empty")
		return
	}
	if why := temporaryRefusal(text); isTemporary(chatID) && why != "" {
		refuse(http.StatusBadRequest, why)
		return
	}
	msg := message(id, chatID, text)
	msg.Media = media
	c.log.Info("web message", "chat", chatID, "text", chat.Preview(text, 80), "media", msg.Media)
	if err := c.publishMessage(r.Context(), msg); err != nil {
		c.log.Error("publishing a web message failed", "chat", chatID, "error", err)
		refuse(http.StatusServiceUnavailable, "the agent could not take the message: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": msg.ID, "session": protocol.SessionKey(Name, chatID)})
}

// readSend reads a send's body: JSON {"chat","text"}, or with files allowed
// a multipart form whose audio and file parts are saved under <workspace>/media.
func (c *Channel) readSend(w http.ResponseWriter, r *http.Request, id string, files bool) (req sendRequest, media []string, status int, err error) {
	ct := r.Header.Get("Content-Type")
	if files && strings.HasPrefix(ct, "multipart/form-data") {
		r.Body = http.MaxBytesReader(w, r.Body, c.maxAudio+maxFiles*maxFile+maxBody)
		m, status, err := c.readForm(r, id)
		return m.sendRequest, m.media, status, err
	}
	if !strings.HasPrefix(ct, "application/json") {
		want := "send JSON (Content-Type: application/json): {\"chat\": \"…\", \"text\": \"…\"}"
		if files {
			want += ", or multipart/form-data with chat, text, an " + audioPart + " file and " + filePart + " files"
		}
		return req, nil, http.StatusUnsupportedMediaType, errors.New(want)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return req, nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the message is larger than %d MB", maxBody>>20)
		}
		return req, nil, http.StatusBadRequest, fmt.Errorf("could not read the request: %w", err)
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return req, nil, http.StatusBadRequest, fmt.Errorf("the body is not JSON {\"chat\", \"text\"}: %w", err)
	}
	return req, nil, http.StatusOK, nil
}

// crossOrigin answers 403 to a browser request from another site and says so.
func crossOrigin(w http.ResponseWriter, r *http.Request) bool {
	if sameOrigin(r) {
		return false
	}
	writeError(w, http.StatusForbidden, "cross-origin requests are refused")
	return true
}

// sameOrigin refuses a browser POST from another site (a page elsewhere
// must not talk to the agent through this one's open port).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true // not a browser's cross-origin request
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// sessionParam is the session a request names: ?session=<channel:chat> or a web ?chat=.
func sessionParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	key := r.URL.Query().Get("session")
	if key == "" {
		chatID, ok := chatParam(w, r.URL.Query().Get("chat"))
		return protocol.SessionKey(Name, chatID), ok
	}
	return key, validSession(w, key)
}

func chatParam(w http.ResponseWriter, chatID string) (string, bool) {
	if !chatIDs.MatchString(chatID) {
		writeError(w, http.StatusBadRequest, chatProblem(chatID))
		return "", false
	}
	return chatID, true
}

func chatProblem(chatID string) string {
	return fmt.Sprintf("chat %q: want 1–64 letters, digits, '-' or '_'", chatID)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"could not encode the answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
