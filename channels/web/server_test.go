package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// published records what the channel publishes, as the manager would take it.
type published struct {
	mu   sync.Mutex
	msgs []protocol.Inbound
	err  error
}

func (p *published) publish(_ context.Context, msg protocol.Inbound, _ channels.Admitted) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	p.msgs = append(p.msgs, msg)
	return nil
}

func (p *published) all() []protocol.Inbound {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]protocol.Inbound(nil), p.msgs...)
}

// fixedTurns answers every session with one state.
type fixedTurns struct{ now TurnNow }

func (f fixedTurns) Now(context.Context, string) (TurnNow, error) { return f.now, nil }

func startChannel(t *testing.T, token string) (*Channel, *published, string) {
	t.Helper()
	return startChannelWith(t, func(cfg *config.Config) { editBlock(t, cfg, func(b *Config) { b.Token = token }) })
}

// startChannelWith starts a web chat on a free port with the default config as adjust leaves it.
func startChannelWith(t *testing.T, adjust func(*config.Config)) (*Channel, *published, string) {
	t.Helper()
	return startChannelOn(t, nil, adjust)
}

// startChannelOn starts a web chat on a journal (nil: the home's files).
func startChannelOn(t *testing.T, journal session.Store, adjust func(*config.Config)) (*Channel, *published, string) {
	t.Helper()
	cfg := config.Default()
	cfg.Path = filepath.Join(t.TempDir(), "config.json")
	editBlock(t, cfg, func(b *Config) { b.Port = 0 })
	adjust(cfg)
	c, err := New(channels.Deps{Config: cfg, Workspace: t.TempDir(), Sessions: journal, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	p := &published{}
	require.NoError(t, c.Start(context.Background(), p.publish))
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	return c, p, "http://" + c.endpoint.Addr()
}

type answer struct {
	status int
	body   string
	header http.Header
}

func call(t *testing.T, method, url, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1] // the client sends req.Host, not a Host header
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, body: string(b), header: resp.Header}
}

func TestSendPublishesIntoTheChatsSession(t *testing.T) {
	_, p, base := startChannel(t, "")
	a := call(t, http.MethodPost, base+"/api/send", `{"chat":"abc-1","text":"hello **there**"}`)
	require.Equal(t, http.StatusOK, a.status, a.body)
	var got struct{ ID, Session string }
	require.NoError(t, json.Unmarshal([]byte(a.body), &got))
	require.Equal(t, "web:abc-1", got.Session)
	msgs := p.all()
	require.Len(t, msgs, 1)
	require.Equal(t, got.ID, msgs[0].ID)
	require.Equal(t, "hello **there**", msgs[0].Content)
	require.Equal(t, protocol.Route{Channel: "web", ChatID: "abc-1", SenderID: "web"}, msgs[0].Route,
		"no process queue: replies go through the web channel's shared queue")
}

func TestStopPublishesSlashStop(t *testing.T) {
	_, p, base := startChannel(t, "")
	a := call(t, http.MethodPost, base+"/api/stop", `{"chat":"c1"}`)
	require.Equal(t, http.StatusOK, a.status, a.body)
	msgs := p.all()
	require.Len(t, msgs, 1)
	require.Equal(t, "/stop", msgs[0].Content)
	require.Equal(t, "c1", msgs[0].Route.ChatID)
}

func TestBadInputIsRefusedAndNothingPublished(t *testing.T) {
	_, p, base := startChannel(t, "")
	cases := []struct {
		name, body string
		header     []string
		status     int
		want       string
	}{
		{"bad chat", `{"chat":"../x","text":"hi"}`, nil, 400, `want 1–64 letters`},
		{"empty", `{"chat":"c","text":"  "}`, nil, 400, "the message is empty"},
		{"not json", `chat=c`, nil, 400, "not JSON"},
		{"form post", `{"chat":"c","text":"hi"}`, []string{"Content-Type", "text/plain"}, 415, "send JSON"},
		{"cross origin", `{"chat":"c","text":"hi"}`, []string{"Origin", "http://evil.example"}, 403, "cross-origin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, http.MethodPost, base+"/api/send", tc.body, tc.header...)
			require.Equal(t, tc.status, a.status, a.body)
			require.Contains(t, a.body, tc.want)
		})
	}
	require.Equal(t, http.StatusMethodNotAllowed, call(t, http.MethodGet, base+"/api/send", "").status)
	require.Empty(t, p.all())
}

func TestPublishFailureIsReported(t *testing.T) {
	_, p, base := startChannel(t, "")
	p.err = io.ErrUnexpectedEOF
	a := call(t, http.MethodPost, base+"/api/send", `{"chat":"c","text":"hi"}`)
	require.Equal(t, http.StatusServiceUnavailable, a.status)
	require.Contains(t, a.body, "could not take the message")
}

// sseEvent is one event read from the stream.
type sseEvent struct {
	name string
	data map[string]any
}

// openEvents opens a chat's event stream; events arrive on the channel.
func openEvents(t *testing.T, url string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	out := make(chan sseEvent, 64)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data)
			case line == "" && ev.name != "":
				out <- ev
				ev = sseEvent{}
			}
		}
	}()
	return out
}

func next(t *testing.T, evs <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-evs:
		require.True(t, ok, "the stream ended")
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
		return sseEvent{}
	}
}

func TestEventsStreamTheChatsTurn(t *testing.T) {
	c, _, base := startChannel(t, "")
	c.UseTemporal(fixedTurns{TurnNow{Running: true, RunID: "run-1", State: "RUN", Iteration: 2, Hints: []string{"read_file README.md"}}}, "http://127.0.0.1:8233", "default")
	evs := openEvents(t, base+"/api/events?chat=c1")
	first := next(t, evs)
	require.Equal(t, "turn", first.name, "a reconnecting page first learns where the turn is")
	require.Equal(t, true, first.data["running"])
	require.Equal(t, "RUN", first.data["state"])
	require.Equal(t, []any{"read_file README.md"}, first.data["hints"])
	require.Eventually(t, func() bool { return c.clients.count("c1") == 1 }, 5*time.Second, 5*time.Millisecond)

	route := protocol.Route{Channel: "web", ChatID: "c1"}
	other := protocol.Route{Channel: "web", ChatID: "c2"}
	ctx := context.Background()
	c.SendDelta(ctx, channels.StreamEvent{Route: other, Turn: "t", Delta: "not for c1"})
	c.SendDelta(ctx, channels.StreamEvent{Route: route, Turn: "t", Iteration: 1, ToolHint: "exec sleep 5"})
	c.SendDelta(ctx, channels.StreamEvent{Route: route, Turn: "t", Injected: []string{"web-42"}})
	c.SendDelta(ctx, channels.StreamEvent{Route: route, Turn: "t", Iteration: 2, Reasoning: "hmm"})
	c.SendDelta(ctx, channels.StreamEvent{Route: route, Turn: "t", Iteration: 2, Delta: "Hel"})
	c.SendDelta(ctx, channels.StreamEvent{Route: route, Turn: "t", Iteration: 2, Reset: true})
	c.SendDelta(ctx, channels.StreamEvent{Route: route, Turn: "t", Iteration: 2, Delta: "Hello"})
	c.SendDelta(ctx, channels.StreamEvent{Route: route, Turn: "t", Iteration: 2, End: true})
	reply := channels.Reply{ID: "t#e#web-1", Route: route, Turn: "t", Text: "Hello", MessageIDs: []string{"web-1"}}
	require.NoError(t, c.Send(ctx, reply))
	require.NoError(t, c.Send(ctx, reply)) // a retried delivery
	require.NoError(t, c.Send(ctx, channels.Reply{Route: route, Text: "Stopped 1 task(s).", Kind: protocol.ReplySystem}))

	want := []struct{ name, text string }{
		{"hint", "exec sleep 5"}, {"injected", ""}, {"reasoning", "hmm"}, {"delta", "Hel"}, {"reset", ""}, {"delta", "Hello"}, {"end", ""},
		{"reply", "Hello"}, {"reply", "Stopped 1 task(s)."},
	}
	for _, w := range want {
		ev := next(t, evs)
		require.Equal(t, w.name, ev.name)
		if w.text != "" {
			require.Equal(t, w.text, ev.data["text"])
		}
		if ev.name == "injected" {
			require.Equal(t, []any{"web-42"}, ev.data["ids"])
		}
		if ev.name == "reply" && w.text == "Hello" {
			require.Equal(t, []any{"web-1"}, ev.data["message_ids"])
		}
	}
	select {
	case ev := <-evs:
		t.Fatalf("unexpected event %v (a retried delivery is shown once)", ev)
	default:
	}
	require.NoError(t, c.Stop(ctx))
	for range evs { // Stop ends the stream: the page reconnects elsewhere
	}
}

func TestSessionsAndHistoryComeFromTheJournal(t *testing.T) {
	c, _, base := startChannel(t, "")
	c.UseTemporal(fixedTurns{}, "http://127.0.0.1:8233", "default")
	ctx := context.Background()
	_, err := c.store.Append(ctx, "web:old", chat.Message{Role: chat.RoleUser, Content: "first question\nmore", Turn: "r0", EntryID: "u"})
	require.NoError(t, err)
	_, err = c.store.Append(ctx, "cli:direct", chat.Message{Role: chat.RoleUser, Content: "not a web session", Turn: "x", EntryID: "u"})
	require.NoError(t, err)
	_, err = c.store.Append(ctx, "web:new", chat.Message{Role: chat.RoleUser, Content: "/help", Turn: "r1", EntryID: "c", Command: true},
		chat.Message{Role: chat.RoleUser, Content: "read the readme", Turn: "r1", EntryID: "u"},
		chat.Message{Role: chat.RoleAssistant, Turn: "r1", EntryID: "a1", ToolCalls: []chat.ToolCall{{ID: "k1", Type: "function",
			Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"README.md"}`}}}},
		chat.Message{Role: chat.RoleTool, ToolCallID: "k1", Name: "read_file", Content: "# readme", Turn: "r1", EntryID: "t1"},
		chat.Message{Role: chat.RoleAssistant, Content: "It says *readme*.", Turn: "r1", EntryID: "a2"})
	require.NoError(t, err)
	hourAgo := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(c.store.Path("web:old"), hourAgo, hourAgo))

	a := call(t, http.MethodGet, base+"/api/sessions", "")
	require.Equal(t, http.StatusOK, a.status, a.body)
	var list struct{ Sessions []conversation }
	require.NoError(t, json.Unmarshal([]byte(a.body), &list))
	require.Len(t, list.Sessions, 3, "the sessions of every channel")
	require.Equal(t, "web:old", list.Sessions[2].Key, "newest first")
	require.Equal(t, "first question", list.Sessions[2].Title)
	byKey := map[string]conversation{}
	for _, s := range list.Sessions {
		byKey[s.Key] = s
	}
	require.Equal(t, "read the readme", byKey["web:new"].Title, "the first line a person typed, not a command")
	require.Equal(t, conversation{Key: "cli:direct", Channel: "cli", Chat: "direct", Title: "not a web session", Updated: byKey["cli:direct"].Updated}, byKey["cli:direct"])

	a = call(t, http.MethodGet, base+"/api/history?chat=new", "")
	require.Equal(t, http.StatusOK, a.status, a.body)
	var h struct {
		Session  string
		Messages []item
		Turn     TurnNow
		Inspect  string
	}
	require.NoError(t, json.Unmarshal([]byte(a.body), &h))
	require.Equal(t, "web:new", h.Session)
	require.Equal(t, []item{
		{Role: "user", Text: "/help", Turn: "r1", Command: true},
		{Role: "user", Text: "read the readme", Turn: "r1", Index: 1},
		{Role: "hint", Text: "read_file README.md", Turn: "r1", Index: 2},
		{Role: "assistant", Text: "It says *readme*.", HTML: "<p>It says <em>readme</em>.</p>", Turn: "r1", Index: 4},
	}, h.Messages)
	require.False(t, h.Turn.Running)
	require.Equal(t, "http://127.0.0.1:8233/namespaces/default/workflows/turn%2Fweb:new/", h.Inspect)

	a = call(t, http.MethodGet, base+"/api/history?chat=nobody", "")
	require.Equal(t, http.StatusOK, a.status)
	require.Contains(t, a.body, `"messages":[]`, "a new chat is empty, not an error")
	require.Equal(t, http.StatusBadRequest, call(t, http.MethodGet, base+"/api/history?chat=", "").status)
}

func TestTokenGuardsEveryRequest(t *testing.T) {
	c, p, base := startChannel(t, "s3cret")
	require.Contains(t, c.Describe(), "?token=s3cret", "the banner prints a URL that opens")
	for _, path := range []string{"/", "/chat.js", "/turn.js", "/api/sessions", "/api/history?chat=c", "/api/events?chat=c", "/api/info"} {
		a := call(t, http.MethodGet, base+path, "")
		require.Equal(t, http.StatusUnauthorized, a.status, path)
		require.Contains(t, a.body, "needs its token")
	}
	require.Equal(t, http.StatusUnauthorized, call(t, http.MethodPost, base+"/api/send", `{"chat":"c","text":"hi"}`).status)
	require.Equal(t, http.StatusUnauthorized, call(t, http.MethodPost, base+"/api/send", `{"chat":"c","text":"hi"}`, "Authorization", "Bearer wrong").status)
	require.Empty(t, p.all())

	require.Equal(t, http.StatusOK, call(t, http.MethodPost, base+"/api/send", `{"chat":"c","text":"hi"}`, "Authorization", "Bearer s3cret").status)
	page := call(t, http.MethodGet, base+"/?token=s3cret", "")
	require.Equal(t, http.StatusOK, page.status)
	cookie := page.header.Get("Set-Cookie")
	require.Contains(t, cookie, cookieName+"=s3cret")
	require.Contains(t, cookie, "HttpOnly")
	require.Equal(t, http.StatusOK, call(t, http.MethodGet, base+"/api/sessions", "", "Cookie", cookieName+"=s3cret").status)
	require.Equal(t, http.StatusUnauthorized, call(t, http.MethodGet, base+"/api/sessions", "", "Cookie", cookieName+"=nope").status)
	require.Len(t, p.all(), 1)
}

func TestPageIsEmbeddedAndLocked(t *testing.T) {
	_, _, base := startChannel(t, "")
	for path, typ := range map[string]string{"/": "text/html", "/chat.js": "text/javascript", "/chat.css": "text/css"} {
		a := call(t, http.MethodGet, base+path, "")
		require.Equal(t, http.StatusOK, a.status, path)
		require.Contains(t, a.header.Get("Content-Type"), typ)
		require.Contains(t, a.header.Get("Content-Security-Policy"), "default-src 'self'", "no inline or remote script runs")
	}
	require.Equal(t, http.StatusNotFound, call(t, http.MethodGet, base+"/static/index.html", "").status)
}

func TestReasoningIsDrawnOnlyWithShowReasoning(t *testing.T) {
	c, _, base := startChannel(t, "")
	c.UseTemporal(fixedTurns{TurnNow{}}, "http://127.0.0.1:8233", "default")
	evs := openEvents(t, base+"/api/events?chat=c1")
	require.Equal(t, "turn", next(t, evs).name)
	require.Eventually(t, func() bool { return c.clients.count("c1") == 1 }, 5*time.Second, 5*time.Millisecond)
	route := protocol.Route{Channel: "web", ChatID: "c1"}
	ctx := context.Background()
	c.showReasoning = false // channels.showReasoning: false
	c.SendDelta(ctx, channels.StreamEvent{Route: route, Turn: "t", Iteration: 1, Reasoning: "secret thoughts", Delta: "Hi"})
	ev := next(t, evs)
	require.Equal(t, "delta", ev.name, "no reasoning event without showReasoning")
	require.Equal(t, "Hi", ev.data["text"])
}

// On the address of the process's shared listener (gateway.port =
// channels.web.port, both 18790 by default) the chat serves there beside the
// listener's own routes, token and all, and leaves it when it stops.
func TestChatSharesTheProcessListenerOnTheSameAddress(t *testing.T) {
	routes := http.NewServeMux()
	routes.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "alive") })
	shared, err := channels.ListenShared("127.0.0.1:0", routes, channels.Hosts{}, "test", slog.Default())
	require.NoError(t, err)
	defer func() { _ = shared.Shutdown(context.Background()) }()
	base := "http://" + shared.Addr()
	require.Equal(t, http.StatusNotFound, call(t, http.MethodGet, base+"/", "").status, "no chat mounted yet")

	cfg := config.Default()
	cfg.Path = filepath.Join(t.TempDir(), "config.json")
	_, port, err := net.SplitHostPort(shared.Addr())
	require.NoError(t, err)
	webPort, err := strconv.Atoi(port)
	require.NoError(t, err)
	editBlock(t, cfg, func(b *Config) { b.Port, b.Token = webPort, "s3cret" })
	c, err := New(channels.Deps{Config: cfg, Workspace: t.TempDir(), Log: slog.New(slog.DiscardHandler), Shared: shared})
	require.NoError(t, err)
	p := &published{}
	require.NoError(t, c.Start(context.Background(), p.publish), "no second listen on a taken port")
	require.Equal(t, base+"/?token=s3cret", c.Describe())

	require.Equal(t, "alive", call(t, http.MethodGet, base+"/health", "").body, "the listener's own route needs no chat token")
	require.Equal(t, http.StatusUnauthorized, call(t, http.MethodGet, base+"/", "").status)
	require.Equal(t, http.StatusOK, call(t, http.MethodGet, base+"/?token=s3cret", "").status)
	require.Equal(t, http.StatusOK, call(t, http.MethodPost, base+"/api/send", `{"chat":"c","text":"hi"}`, "Authorization", "Bearer s3cret").status)
	require.Len(t, p.all(), 1)

	require.NoError(t, c.Stop(context.Background()))
	require.Equal(t, http.StatusNotFound, call(t, http.MethodGet, base+"/?token=s3cret", "").status)
	require.Equal(t, "alive", call(t, http.MethodGet, base+"/health", "").body, "the listener stays its owner's")
}

// TestEveryAPIRouteRefusesAnotherOrigin: the Origin check sits in front of
// every API route, reads included, so a page of another site gets nothing
// through the owner's browser even with the token.
func TestEveryAPIRouteRefusesAnotherOrigin(t *testing.T) {
	c, p, base := startChannel(t, "s3cret")
	paths := []string{"/api/info", "/api/sessions", "/api/history", "/api/turn", "/api/media", "/api/context",
		"/api/memory", "/api/subagents", "/api/approvals", "/api/schedules", "/api/schedule", "/api/session",
		"/api/fork", "/api/events", "/api/send", "/api/withdraw", "/api/stop", "/api/goals", "/api/subagent", "/api/discard"}
	for _, path := range paths {
		method, handle := c.route(path)
		require.NotNil(t, handle, path)
		a := call(t, method, base+path+"?chat=c&session=web:c&name=x.png", `{"chat":"c","text":"hi"}`,
			"Authorization", "Bearer s3cret", "Origin", "http://evil.example")
		require.Equal(t, http.StatusForbidden, a.status, "%s %s: %s", method, path, a.body)
		require.Contains(t, a.body, "cross-origin requests are refused")
	}
	require.Empty(t, p.all())
	require.Equal(t, http.StatusOK, call(t, http.MethodGet, base+"/api/sessions", "", "Authorization", "Bearer s3cret",
		"Origin", base).status, "the page's own origin passes")
}
