package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

const testQueue = "nanobot-serve-test"

// published records what the channel publishes, as the manager would take it.
type published struct {
	mu   sync.Mutex
	msgs []protocol.Inbound
	hook func(ctx context.Context, msg protocol.Inbound) error
}

func (p *published) publish(ctx context.Context, msg protocol.Inbound, _ channels.Admitted) error {
	p.mu.Lock()
	p.msgs = append(p.msgs, msg)
	hook := p.hook
	p.mu.Unlock()
	if hook != nil {
		return hook(ctx, msg)
	}
	return nil
}

// nth waits for the n-th published message (1-based).
func (p *published) nth(t *testing.T, n int) protocol.Inbound {
	t.Helper()
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.msgs) >= n
	}, 5*time.Second, 5*time.Millisecond)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.msgs[n-1]
}

func startChannel(t *testing.T, mutate func(*config.Config)) (*Channel, *published, string) {
	t.Helper()
	cfg := config.Default()
	cfg.Agents.Defaults.Model = "test-model"
	cfg.API.Port = 0
	if mutate != nil {
		mutate(cfg)
	}
	c, err := New(channels.Deps{Config: cfg, Workspace: t.TempDir(), ProcessQueue: testQueue, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	p := &published{}
	require.NoError(t, c.Start(context.Background(), p.publish))
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	return c, p, "http://" + c.endpoint.Addr()
}

type result struct {
	status int
	body   string
	header http.Header
}

// post sends a request in the background; the result arrives on the channel.
func post(t *testing.T, url, body string, header ...string) <-chan result {
	return do(t, context.Background(), http.MethodPost, url, body, header...)
}

func do(t *testing.T, ctx context.Context, method, url, body string, header ...string) <-chan result {
	t.Helper()
	out := make(chan result, 1)
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1] // the client sends req.Host, not a Host header
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- result{status: -1, body: err.Error()}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- result{status: resp.StatusCode, body: string(b), header: resp.Header}
	}()
	return out
}

func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no response")
		return result{}
	}
}

func completionText(t *testing.T, r result) string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, r.body)
	var resp openai.ChatCompletionResponse
	require.NoError(t, json.Unmarshal([]byte(r.body), &resp))
	require.Equal(t, "chat.completion", resp.Object)
	require.Equal(t, "test-model", resp.Model)
	require.True(t, strings.HasPrefix(resp.ID, "chatcmpl-"), resp.ID)
	require.Len(t, resp.Choices, 1)
	require.Equal(t, openai.ChatMessageRoleAssistant, resp.Choices[0].Message.Role)
	require.Equal(t, openai.FinishReasonStop, resp.Choices[0].FinishReason)
	return resp.Choices[0].Message.Content
}

const hello = `{"messages":[{"role":"user","content":"hello"}]}`

func TestReplyAnswersItsRequest(t *testing.T) {
	c, p, url := startChannel(t, nil)
	res := post(t, url+"/v1/chat/completions", hello)
	msg := p.nth(t, 1)
	require.Equal(t, "hello", msg.Content)
	require.Equal(t, protocol.Route{Channel: "api", ChatID: "default", SenderID: "api", Queue: testQueue}, msg.Route)
	require.Equal(t, protocol.OwnChat(), msg.Scope, "api:<session_id> even under unifiedSession, as in nanobot")
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: msg.Route, MessageIDs: []string{msg.ID}, Text: "Hi there!"}))
	require.Equal(t, "Hi there!", completionText(t, wait(t, res)))
	require.Zero(t, c.waiters.count())
	// A retried delivery of the same reply finds nobody and is not an error.
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: msg.Route, MessageIDs: []string{msg.ID}, Text: "Hi there!"}))
}

func TestEmptyReplyIsNanobotsEmptyFinalMessage(t *testing.T) {
	c, p, url := startChannel(t, nil)
	res := post(t, url+"/v1/chat/completions", hello)
	msg := p.nth(t, 1)
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: msg.Route, MessageIDs: []string{msg.ID}, Text: " \n"}))
	require.Equal(t, protocol.EmptyFinalText, completionText(t, wait(t, res)))
}

func TestRequestsOfOneSessionEachGetTheirOwnReply(t *testing.T) {
	c, p, url := startChannel(t, nil)
	first := post(t, url+"/v1/chat/completions", `{"session_id":"s","messages":[{"role":"user","content":"one"}]}`)
	m1 := p.nth(t, 1)
	second := post(t, url+"/v1/chat/completions", `{"session_id":"s","messages":[{"role":"user","content":"two"}]}`)
	m2 := p.nth(t, 2)
	require.Equal(t, "s", m1.Route.ChatID)
	require.Equal(t, "s", m2.Route.ChatID)
	require.NotEqual(t, m1.ID, m2.ID)
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: m2.Route, MessageIDs: []string{m2.ID}, Text: "reply two"}))
	require.Equal(t, "reply two", completionText(t, wait(t, second)))
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: m1.Route, MessageIDs: []string{m1.ID}, Text: "reply one"}))
	require.Equal(t, "reply one", completionText(t, wait(t, first)))

	// One reply answering two messages (one injected into the other's turn) ends both.
	a := post(t, url+"/v1/chat/completions", `{"session_id":"s","messages":[{"role":"user","content":"three"}]}`)
	m3 := p.nth(t, 3)
	b := post(t, url+"/v1/chat/completions", `{"session_id":"s","messages":[{"role":"user","content":"four"}]}`)
	m4 := p.nth(t, 4)
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: m3.Route, MessageIDs: []string{m3.ID, m4.ID}, Text: "both"}))
	require.Equal(t, "both", completionText(t, wait(t, a)))
	require.Equal(t, "both", completionText(t, wait(t, b)))
}

// streamed reads an SSE response as go-openai does and joins its content.
func streamed(t *testing.T, url, body string, send func()) (string, error) {
	t.Helper()
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = url + "/v1"
	var req openai.ChatCompletionRequest
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	req.Stream = true
	stream, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(), req)
	require.NoError(t, err)
	defer stream.Close()
	send()
	var text strings.Builder
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return text.String(), nil
		}
		if err != nil {
			return text.String(), err
		}
		text.WriteString(resp.Choices[0].Delta.Content)
	}
}

func TestStreamDrawsTheTurnThroughARetry(t *testing.T) {
	c, p, url := startChannel(t, nil)
	text, err := streamed(t, url, hello, func() {
		msg := p.nth(t, 1)
		ev := channels.StreamEvent{Route: msg.Route, Turn: "run-1", Iteration: 1}
		for _, d := range []string{"Hello", " wor"} {
			ev.Delta = d
			c.SendDelta(context.Background(), ev)
		}
		c.SendDelta(context.Background(), channels.StreamEvent{Route: msg.Route, Turn: "run-1", Iteration: 1, Reset: true})
		for _, d := range []string{"Hel", "lo world", "!"} {
			ev.Delta = d
			c.SendDelta(context.Background(), ev)
		}
		other := msg.Route
		other.Queue = "another-process"
		c.SendDelta(context.Background(), channels.StreamEvent{Route: other, Turn: "run-9", Iteration: 1, Delta: "not ours"})
		require.NoError(t, c.Send(context.Background(), channels.Reply{Route: msg.Route, Turn: "run-1", MessageIDs: []string{msg.ID}, Text: "Hello world!"}))
	})
	require.NoError(t, err)
	require.Equal(t, "Hello world!", text)
}

func TestStreamWithoutDeltasGetsTheReply(t *testing.T) {
	c, p, url := startChannel(t, nil)
	text, err := streamed(t, url, hello, func() {
		msg := p.nth(t, 1)
		require.NoError(t, c.Send(context.Background(), channels.Reply{Route: msg.Route, MessageIDs: []string{msg.ID}, Text: "from another worker"}))
	})
	require.NoError(t, err)
	require.Equal(t, "from another worker", text)
}

func TestOnlyTheRequestTheTurnAnswersIsDrawnItsStream(t *testing.T) {
	c, p, url := startChannel(t, nil)
	done := make(chan string, 1)
	go func() {
		text, err := streamed(t, url, hello, func() {})
		require.NoError(t, err)
		done <- text
	}()
	m1 := p.nth(t, 1)
	second := post(t, url+"/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"later"}]}`)
	m2 := p.nth(t, 2)
	c.SendDelta(context.Background(), channels.StreamEvent{Route: m1.Route, Turn: "run-1", Iteration: 1, Delta: "first answer"})
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: m1.Route, Turn: "run-1", MessageIDs: []string{m1.ID}, Text: "first answer"}))
	require.Equal(t, "first answer", <-done)
	c.SendDelta(context.Background(), channels.StreamEvent{Route: m2.Route, Turn: "run-2", Iteration: 1, Delta: "second answer"})
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: m2.Route, Turn: "run-2", MessageIDs: []string{m2.ID}, Text: "second answer"}))
	r := wait(t, second)
	require.Equal(t, http.StatusOK, r.status)
	require.NotContains(t, r.body, "first answer")
	require.Contains(t, r.body, `"content":"second answer"`)
	require.True(t, strings.HasSuffix(r.body, "data: [DONE]\n\n"), r.body)
}

func TestTimeoutIs504AndLeavesNothingWaiting(t *testing.T) {
	c, p, url := startChannel(t, func(cfg *config.Config) { cfg.API.Timeout = 0.3 })
	res := post(t, url+"/v1/chat/completions", hello)
	msg := p.nth(t, 1)
	r := wait(t, res)
	require.Equal(t, http.StatusGatewayTimeout, r.status)
	require.JSONEq(t, `{"error":{"message":"Request timed out after 0.3s","type":"server_error","code":504}}`, r.body)
	require.Zero(t, c.waiters.count())
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: msg.Route, MessageIDs: []string{msg.ID}, Text: "too late"}))

	text, err := streamed(t, url, hello, func() {})
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, "Request timed out after 0.3s", apiErr.Message)
	require.Empty(t, text)
}

func TestClientGoneLeavesNothingWaiting(t *testing.T) {
	c, p, url := startChannel(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	res := do(t, ctx, http.MethodPost, url+"/v1/chat/completions", hello)
	msg := p.nth(t, 1)
	require.Equal(t, 1, c.waiters.count())
	cancel()
	require.Equal(t, -1, wait(t, res).status)
	require.Eventually(t, func() bool { return c.waiters.count() == 0 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: msg.Route, MessageIDs: []string{msg.ID}, Text: "nobody reads this"}))
}

func TestStopAnswersItselfAndTheStoppedRequest(t *testing.T) {
	c, p, url := startChannel(t, nil)
	running := post(t, url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"long job"}]}`)
	p.nth(t, 1)
	p.mu.Lock()
	p.hook = func(ctx context.Context, msg protocol.Inbound) error {
		// The manager answers a /stop of a running turn while publishing it.
		return c.Send(ctx, channels.Reply{Route: msg.Route, Text: "Stopped 1 task(s).", Kind: protocol.ReplySystem})
	}
	p.mu.Unlock()
	stop := post(t, url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"/stop"}]}`)
	require.Equal(t, "Stopped 1 task(s).", completionText(t, wait(t, stop)))
	require.Equal(t, "Stopped 1 task(s).", completionText(t, wait(t, running)))
	require.Zero(t, c.waiters.count())
}

func TestMessageToolSendAnswersTheTurnsRequestOnce(t *testing.T) {
	c, p, url := startChannel(t, nil)
	first := post(t, url+"/v1/chat/completions", hello)
	m1 := p.nth(t, 1)
	second := post(t, url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"next"}]}`)
	m2 := p.nth(t, 2)
	send := func(turn, text string) {
		require.NoError(t, c.Send(context.Background(), channels.Reply{Route: m1.Route, Turn: turn, Text: text, Kind: protocol.ReplyMessage}))
	}
	send("run-1/call_a", "sent by the message tool")
	require.Equal(t, "sent by the message tool", completionText(t, wait(t, first)))
	send("run-1/call_b", "a second send of the same turn")
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: m2.Route, Turn: "run-2", MessageIDs: []string{m2.ID}, Text: "the next turn"}))
	require.Equal(t, "the next turn", completionText(t, wait(t, second)))
}

func TestPublishFailureIs503(t *testing.T) {
	c, p, url := startChannel(t, nil)
	p.hook = func(context.Context, protocol.Inbound) error { return errors.New("temporal is down") }
	r := wait(t, post(t, url+"/v1/chat/completions", hello))
	require.Equal(t, http.StatusServiceUnavailable, r.status)
	require.JSONEq(t, `{"error":{"message":"The agent could not take the message: temporal is down","type":"server_error","code":503}}`, r.body)
	require.Zero(t, c.waiters.count())
}

func TestStopAnswersWaitingRequests503(t *testing.T) {
	c, p, url := startChannel(t, nil)
	res := post(t, url+"/v1/chat/completions", hello)
	p.nth(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, c.Stop(ctx))
	r := wait(t, res)
	require.Equal(t, http.StatusServiceUnavailable, r.status)
	require.JSONEq(t, `{"error":{"message":"The server is shutting down","type":"server_error","code":503}}`, r.body)

	// A request that slipped in as the server stopped is refused, not published.
	rec := httptest.NewRecorder()
	c.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(hello)))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	p.mu.Lock()
	require.Len(t, p.msgs, 1)
	p.mu.Unlock()
	require.Zero(t, c.waiters.count())
}

func TestAPIKeyGuardsAllButHealth(t *testing.T) {
	_, _, url := startChannel(t, func(cfg *config.Config) { cfg.API.APIKey = "sekret" })
	cases := []struct {
		name, method, path, auth string
		status                   int
		body                     string
	}{
		{"health is open", "GET", "/health", "", 200, `{"status":"ok"}`},
		{"models without a key", "GET", "/v1/models", "", 401,
			`{"error":{"message":"Missing Authorization header: send Authorization: Bearer <api key>","type":"invalid_request_error","code":401}}`},
		{"models with a wrong key", "GET", "/v1/models", "Bearer nope", 401,
			`{"error":{"message":"Invalid API key","type":"invalid_request_error","code":401}}`},
		{"not bearer", "GET", "/v1/models", "Basic c2VrcmV0", 401,
			`{"error":{"message":"Invalid API key","type":"invalid_request_error","code":401}}`},
		{"completions with a wrong key", "POST", "/v1/chat/completions", "Bearer nope", 401,
			`{"error":{"message":"Invalid API key","type":"invalid_request_error","code":401}}`},
		{"unknown route needs the key too", "GET", "/v1/nothing", "", 401,
			`{"error":{"message":"Missing Authorization header: send Authorization: Bearer <api key>","type":"invalid_request_error","code":401}}`},
		{"models with the key", "GET", "/v1/models", "Bearer sekret", 200,
			`{"object":"list","data":[{"id":"test-model","object":"model","created":0,"owned_by":"nanobot"}]}`},
		{"unknown route", "GET", "/v1/nothing", "Bearer sekret", 404,
			`{"error":{"message":"Invalid URL (GET /v1/nothing)","type":"invalid_request_error","code":404}}`},
		{"wrong method", "GET", "/v1/chat/completions", "Bearer sekret", 405,
			`{"error":{"message":"Method GET is not allowed on /v1/chat/completions (use POST)","type":"invalid_request_error","code":405}}`},
		{"bad body", "POST", "/v1/chat/completions", "Bearer sekret", 400,
			`{"error":{"message":"Only a single user message is supported","type":"invalid_request_error","code":400}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var header []string
			if tc.auth != "" {
				header = []string{"Authorization", tc.auth}
			}
			r := wait(t, do(t, context.Background(), tc.method, url+tc.path, `{"messages":[]}`, header...))
			require.Equal(t, tc.status, r.status, r.body)
			require.JSONEq(t, tc.body, r.body)
			require.Equal(t, "application/json", r.header.Get("Content-Type"))
		})
	}
}

func TestImagesAreSavedIntoTheWorkspace(t *testing.T) {
	c, p, url := startChannel(t, nil)
	png := []byte{0x89, 'P', 'N', 'G', 9, 9}
	body := `{"messages":[{"role":"user","content":[{"type":"text","text":"what is this"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(png) + `"}}]}]}`
	res := post(t, url+"/v1/chat/completions", body)
	msg := p.nth(t, 1)
	require.Equal(t, "what is this", msg.Content)
	require.Len(t, msg.Media, 1)
	require.True(t, strings.HasPrefix(msg.Media[0], c.workspace+"/media/api/"), msg.Media[0])
	data, err := os.ReadFile(msg.Media[0])
	require.NoError(t, err)
	require.True(t, bytes.Equal(png, data))
	require.NoError(t, c.Send(context.Background(), channels.Reply{Route: msg.Route, MessageIDs: []string{msg.ID}, Text: "a tiny png"}))
	require.Equal(t, "a tiny png", completionText(t, wait(t, res)))
}

func TestListensOnLoopbackByDefault(t *testing.T) {
	c, _, _ := startChannel(t, nil)
	require.True(t, strings.HasPrefix(c.Describe(), "http://127.0.0.1:"), c.Describe())
	require.True(t, strings.HasSuffix(c.Describe(), "/v1"), c.Describe())
}
