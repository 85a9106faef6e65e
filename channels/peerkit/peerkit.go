// Package peerkit is what the fake platforms of the channel tests (the
// *peer packages) share: a WebSocket upgrade with writes that take turns,
// a recorder of the REST calls a bot made, an issuer of expiring access
// tokens, and JSON answers. Each peer keeps only its platform's wire.
package peerkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// WriteJSON answers with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// WSURL is the ws:// address of path on an http:// server.
func WSURL(httpURL, path string) string { return "ws" + strings.TrimPrefix(httpURL, "http") + path }

// Call is one request the bot made.
type Call struct {
	Method, Path, Query, Auth string
	Body                      []byte
}

// Recorder keeps the requests that reach the handlers it wraps.
type Recorder struct {
	mu    sync.Mutex
	calls []Call
}

// Wrap records each request (its body stays readable for h), then serves it.
func (r *Recorder) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.Record(Call{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery,
			Auth: req.Header.Get("Authorization"), Body: body})
		h.ServeHTTP(w, req)
	})
}

// Record keeps a call the peer read itself (a path it normalised).
func (r *Recorder) Record(c Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

// Calls are the requests so far, in order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// CallsTo counts the requests of method (any: "") to a path starting with prefix.
func (r *Recorder) CallsTo(method, prefix string) int {
	n := 0
	for _, c := range r.Calls() {
		if (method == "" || c.Method == method) && strings.HasPrefix(c.Path, prefix) {
			n++
		}
	}
	return n
}

// Tokens issues access tokens that expire, as a platform's token endpoint does.
type Tokens struct {
	mu     sync.Mutex
	prefix string
	ttl    time.Duration
	valid  map[string]time.Time
	issued []time.Time
}

// NewTokens issues tokens named prefix-N living ttl.
func NewTokens(prefix string, ttl time.Duration) *Tokens {
	return &Tokens{prefix: prefix, ttl: ttl, valid: map[string]time.Time{}}
}

// SetTTL sets the lifetime of the tokens issued from now on.
func (t *Tokens) SetTTL(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ttl = d
}

// Issue is a new token and its lifetime.
func (t *Tokens) Issue() (string, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	t.issued = append(t.issued, now)
	tok := fmt.Sprintf("%s-%d", t.prefix, len(t.issued))
	t.valid[tok] = now.Add(t.ttl)
	return tok, t.ttl
}

// Valid reports whether tok was issued and has not run out.
func (t *Tokens) Valid(tok string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	exp, ok := t.valid[tok]
	return ok && time.Now().Before(exp)
}

// ValidBearer checks an Authorization header of the form "<scheme> <token>".
func (t *Tokens) ValidBearer(auth, scheme string) bool {
	tok, ok := strings.CutPrefix(auth, scheme+" ")
	return ok && t.Valid(tok)
}

// Revoke ends every token issued so far (the platform rotated them).
func (t *Tokens) Revoke() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.valid)
}

// Issued are when each token was issued, in order.
func (t *Tokens) Issued() []time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]time.Time(nil), t.issued...)
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// UpgradeConn takes a bot's WebSocket request as a bare connection, for a
// peer with framing of its own (the response is written on failure).
func UpgradeConn(w http.ResponseWriter, r *http.Request) (*websocket.Conn, error) {
	return upgrader.Upgrade(w, r, nil)
}

// Socket is the peer's side of a bot's WebSocket.
type Socket struct {
	ws   *websocket.Conn
	mu   sync.Mutex
	once sync.Once
	done chan struct{}
}

// Upgrade takes a bot's WebSocket request (the response is written on failure).
func Upgrade(w http.ResponseWriter, r *http.Request) (*Socket, error) {
	ws, err := UpgradeConn(w, r)
	if err != nil {
		return nil, err
	}
	return &Socket{ws: ws, done: make(chan struct{})}, nil
}

// Send writes v as a JSON text message.
func (s *Socket) Send(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.write(websocket.TextMessage, data)
}

// SendText writes bytes as a text message, as they are.
func (s *Socket) SendText(data []byte) error { return s.write(websocket.TextMessage, data) }

// SendBinary writes a binary message.
func (s *Socket) SendBinary(data []byte) error { return s.write(websocket.BinaryMessage, data) }

func (s *Socket) write(typ int, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return s.ws.WriteMessage(typ, data)
}

// Read is the bot's next message.
func (s *Socket) Read() ([]byte, error) {
	_, data, err := s.ws.ReadMessage()
	return data, err
}

// ReadJSON reads the bot's next message into v.
func (s *Socket) ReadJSON(v any) error {
	data, err := s.Read()
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Close ends the socket with a close code (0: drops it without one, as a
// broken link does).
func (s *Socket) Close(code int, reason string) {
	s.once.Do(func() {
		close(s.done)
		if code != 0 {
			s.mu.Lock()
			_ = s.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
			s.mu.Unlock()
		}
		_ = s.ws.Close()
	})
}

// Done is closed once the peer closed the socket.
func (s *Socket) Done() <-chan struct{} { return s.done }

// PingsSeen makes the socket count the bot's WebSocket pings in n (answered as usual).
func (s *Socket) PingsSeen(n func()) {
	s.ws.SetPingHandler(func(data string) error {
		n()
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
}

// Unserved answers what the platform does not serve: a 404, and a test
// failure naming the call, since the bot should never make it.
func Unserved(t testing.TB, platform string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the bot called %s %s, which %s does not serve", r.Method, r.URL, platform)
		http.NotFound(w, r)
	}
}
