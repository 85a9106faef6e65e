package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/session"
)

const apiTestKey = "sekret-key"

// apiServer is a running `nanobot serve`.
type apiServer struct {
	base string // http://127.0.0.1:<port>
	home *testenv.Home
	logs *bytes.Buffer
}

// startServe runs `nanobot serve` with the API on a free port and waits
// until /health answers.
func startServe(t *testing.T, dev *testenv.DevServer, model *modeltest.Server, api map[string]any) *apiServer {
	t.Helper()
	return startServeWith(t, dev, model, map[string]any{"api": api})
}

// startServeWith is startServe with more of config.json (cfg["api"] is the API block).
func startServeWith(t *testing.T, dev *testenv.DevServer, model *modeltest.Server, cfg map[string]any) *apiServer {
	t.Helper()
	port := testenv.FreePort(t)
	cfg["api"].(map[string]any)["port"] = port
	home := testenv.NewHome(t, model.URL(), cfg)
	cmd := exec.Command(testenv.NanobotBin(t), "serve")
	cmd.Env = home.Env(dev.Addr, "NANOBOT_LOG_LEVEL=info")
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _, _ = cmd.Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("nanobot serve output:\n%s", logs.String())
		}
	})
	s := &apiServer{base: "http://127.0.0.1:" + strconv.Itoa(port), home: home, logs: logs}
	require.Eventually(t, func() bool {
		resp, err := http.Get(s.base + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, time.Minute, 100*time.Millisecond, "nanobot serve did not answer /health")
	return s
}

func (s *apiServer) client(key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = s.base + "/v1"
	return openai.NewClientWithConfig(cfg)
}

// raw sends a request as any HTTP client would and returns status and body.
func (s *apiServer) raw(t *testing.T, method, path, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// apiTurnClosed waits until the session's turn workflow (and any run it
// continued as) has closed. Requests of one session are sent only after
// it: a message signalled while a run completes can be lost by the turn
// workflow today (see TestAPIBackToBackRequestsOfOneSession).
func apiTurnClosed(t *testing.T, dev *testenv.DevServer, sessionKey string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID(sessionKey), "").Get(ctx, nil))
}

func apiUserMessage(text string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}
}

// apiReadStream joins a go-openai stream's content and checks each chunk's shape.
func apiReadStream(t *testing.T, stream *openai.ChatCompletionStream) string {
	t.Helper()
	defer stream.Close()
	var text strings.Builder
	var roles []string
	var finishes []openai.FinishReason
	id := ""
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.Equal(t, "chat.completion.chunk", resp.Object)
		require.Equal(t, "test-model", resp.Model)
		if id == "" {
			id = resp.ID
		}
		require.Equal(t, id, resp.ID, "every chunk of one completion has its id")
		require.Len(t, resp.Choices, 1)
		if r := resp.Choices[0].Delta.Role; r != "" {
			roles = append(roles, r)
		}
		if f := resp.Choices[0].FinishReason; f != "" {
			finishes = append(finishes, f)
		}
		text.WriteString(resp.Choices[0].Delta.Content)
	}
	require.True(t, strings.HasPrefix(id, "chatcmpl-"), id)
	require.Equal(t, []string{"assistant"}, roles, "the role comes once, first")
	require.Equal(t, []openai.FinishReason{openai.FinishReasonStop}, finishes)
	return text.String()
}

// TestAPIServeWithGoOpenAI drives the real `nanobot serve` (workers, the
// turn workflow on temporal-dev, the scripted model at the wire) with
// go-openai as the client.
var messageTimeStamp = regexp.MustCompile(`^\[Message Time: [^\]]+\]\n`)

func TestAPIServeWithGoOpenAI(t *testing.T) {
	dev := testenv.StartDevServer(t)
	const (
		plain    = "Hello from the API."
		streamed = "Streaming through Temporal, piece by piece."
		retried  = "This answer was cut off once and retried."
	)
	model := modeltest.New(
		modeltest.Text(plain),
		modeltest.Text(streamed),
		modeltest.Text("Nice to meet you, Ada."),
		modeltest.Text("Your name is Ada."),
		modeltest.Text(retried).Abort(), // the connection drops after the text: the model call is retried
		modeltest.Text(retried),
		modeltest.ToolCalls(modeltest.Call{ID: "msg1", Name: "message", Args: `{"content":"progress: halfway"}`}),
		modeltest.Text("done"),
	)
	defer model.Close()
	s := startServe(t, dev, model, map[string]any{"apiKey": apiTestKey, "timeout": 60})
	client := s.client(apiTestKey)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("plain completion", func(t *testing.T) {
		resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "test-model", Messages: apiUserMessage("hello")})
		require.NoError(t, err)
		require.Equal(t, "chat.completion", resp.Object)
		require.Equal(t, "test-model", resp.Model)
		require.True(t, strings.HasPrefix(resp.ID, "chatcmpl-"), resp.ID)
		require.Len(t, resp.Choices, 1)
		require.Equal(t, openai.ChatMessageRoleAssistant, resp.Choices[0].Message.Role)
		require.Equal(t, plain, resp.Choices[0].Message.Content)
		require.Equal(t, openai.FinishReasonStop, resp.Choices[0].FinishReason)
		last := model.Requests()[0].Messages
		require.True(t, strings.HasPrefix(last[len(last)-1].Content, "hello"), last[len(last)-1].Content)
		require.Contains(t, last[len(last)-1].Content, "Channel: api\nChat ID: default")
	})

	t.Run("streamed completion", func(t *testing.T) {
		apiTurnClosed(t, dev, "api:default")
		stream, err := client.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Messages: apiUserMessage("stream it"), Stream: true})
		require.NoError(t, err)
		require.Equal(t, streamed, apiReadStream(t, stream))
		require.Equal(t, 2, model.Count())
	})

	t.Run("session_id keeps a conversation", func(t *testing.T) {
		ask := func(text string) string {
			body, _ := json.Marshal(map[string]any{"session_id": "ada", "messages": []any{map[string]any{"role": "user", "content": text}}})
			status, out := s.raw(t, "POST", "/v1/chat/completions", "Bearer "+apiTestKey, string(body))
			require.Equal(t, http.StatusOK, status, out)
			var resp openai.ChatCompletionResponse
			require.NoError(t, json.Unmarshal([]byte(out), &resp))
			return resp.Choices[0].Message.Content
		}
		require.Equal(t, "Nice to meet you, Ada.", ask("My name is Ada."))
		apiTurnClosed(t, dev, "api:ada")
		require.Equal(t, "Your name is Ada.", ask("What is my name?"))
		second := model.Requests()[3].Messages
		var history []string
		stamped := 0
		for _, m := range second {
			if m.Role == chat.RoleUser || m.Role == chat.RoleAssistant {
				content := m.Content
				if stamp := messageTimeStamp.FindString(content); stamp != "" {
					stamped++ // a replayed user message keeps its time
					content = strings.TrimPrefix(content, stamp)
				}
				history = append(history, m.Role+": "+strings.SplitN(content, "\n", 2)[0])
			}
		}
		require.Equal(t, 1, stamped, "the earlier user message is stamped with its time, the current one carries the runtime context")
		require.Equal(t, []string{"user: My name is Ada.", "assistant: Nice to meet you, Ada.", "user: What is my name?"}, history,
			"the second request's model input holds the first exchange of session api:ada, and nothing of api:default")
	})

	t.Run("a retried model call streams its text once", func(t *testing.T) {
		apiTurnClosed(t, dev, "api:default")
		stream, err := client.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Messages: apiUserMessage("try twice"), Stream: true})
		require.NoError(t, err)
		require.Equal(t, retried, apiReadStream(t, stream))
		require.Equal(t, 6, model.Count(), "the model was asked twice for this answer")
	})

	t.Run("400: two user messages, a wrong model", func(t *testing.T) {
		status, body := s.raw(t, "POST", "/v1/chat/completions", "Bearer "+apiTestKey,
			`{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`)
		require.Equal(t, http.StatusBadRequest, status)
		require.JSONEq(t, `{"error":{"message":"Only a single user message is supported","type":"invalid_request_error","code":400}}`, body)

		status, body = s.raw(t, "POST", "/v1/chat/completions", "Bearer "+apiTestKey,
			`{"model":"gpt-4o","messages":[{"role":"user","content":"a"}]}`)
		require.Equal(t, http.StatusBadRequest, status)
		require.JSONEq(t, `{"error":{"message":"Only configured model 'test-model' is available","type":"invalid_request_error","code":400}}`, body)

		_, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "gpt-4o", Messages: apiUserMessage("a")})
		var apiErr *openai.APIError
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, http.StatusBadRequest, apiErr.HTTPStatusCode)
		require.Equal(t, "Only configured model 'test-model' is available", apiErr.Message)
		require.Equal(t, 6, model.Count(), "a refused request never reaches the model")
	})

	t.Run("401 without the key, /health open", func(t *testing.T) {
		status, body := s.raw(t, "GET", "/v1/models", "", "")
		require.Equal(t, http.StatusUnauthorized, status)
		require.JSONEq(t, `{"error":{"message":"Missing Authorization header: send Authorization: Bearer <api key>","type":"invalid_request_error","code":401}}`, body)
		status, body = s.raw(t, "POST", "/v1/chat/completions", "Bearer wrong", `{"messages":[{"role":"user","content":"a"}]}`)
		require.Equal(t, http.StatusUnauthorized, status)
		require.JSONEq(t, `{"error":{"message":"Invalid API key","type":"invalid_request_error","code":401}}`, body)
		_, err := s.client("wrong").ListModels(ctx)
		var apiErr *openai.APIError
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, http.StatusUnauthorized, apiErr.HTTPStatusCode)
		require.Equal(t, "Invalid API key", apiErr.Message)

		status, body = s.raw(t, "GET", "/health", "", "")
		require.Equal(t, http.StatusOK, status)
		require.JSONEq(t, `{"status":"ok"}`, body)
		models, err := client.ListModels(ctx)
		require.NoError(t, err)
		require.Len(t, models.Models, 1)
		require.Equal(t, "test-model", models.Models[0].ID)
		require.Equal(t, "nanobot", models.Models[0].OwnedBy)
	})

	t.Run("404 on an unknown route", func(t *testing.T) {
		status, body := s.raw(t, "POST", "/v1/completions", "Bearer "+apiTestKey, `{}`)
		require.Equal(t, http.StatusNotFound, status)
		require.JSONEq(t, `{"error":{"message":"Invalid URL (POST /v1/completions)","type":"invalid_request_error","code":404}}`, body)
	})

	t.Run("a message tool send to the chat answers the request", func(t *testing.T) {
		// The turn does not deliver its final reply to a chat the message tool
		// already answered (nanobot's rule), so the send is the request's answer.
		status, body := s.raw(t, "POST", "/v1/chat/completions", "Bearer "+apiTestKey,
			`{"session_id":"tool","messages":[{"role":"user","content":"work and report"}]}`)
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, `"content":"progress: halfway"`)
		apiTurnClosed(t, dev, "api:tool")
		_, msgs, err := apiJournal(s.home, "api:tool")
		require.NoError(t, err)
		require.Equal(t, "done", msgs[len(msgs)-1].Content, "the turn went on to its final answer, journaled")
	})
	require.Equal(t, 8, model.Count())
}

// TestAPIServeTimesOut504 blocks the model past api.timeout: the request
// gets 504 in OpenAI's error shape, the turn it started goes on and is
// journaled, and the session answers its next request.
func TestAPIServeTimesOut504(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(modeltest.Block().Text("finally"), modeltest.Text("next answer"))
	defer model.Close()
	s := startServe(t, dev, model, map[string]any{"timeout": 1.5})
	ask := func(text string) (int, string) {
		return s.raw(t, "POST", "/v1/chat/completions", "", `{"session_id":"slow","messages":[{"role":"user","content":"`+text+`"}]}`)
	}
	start := time.Now()
	status, body := ask("take your time")
	require.Equal(t, http.StatusGatewayTimeout, status)
	require.JSONEq(t, `{"error":{"message":"Request timed out after 1.5s","type":"server_error","code":504}}`, body)
	require.GreaterOrEqual(t, time.Since(start), 1500*time.Millisecond)
	// On a loaded machine the call may reach the model only after the 504.
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 20*time.Millisecond, "the model is still being asked: the turn goes on")

	model.Release()
	require.Eventually(t, func() bool {
		_, msgs, err := apiJournal(s.home, "api:slow")
		return err == nil && len(msgs) == 2 && msgs[1].Content == "finally"
	}, time.Minute, 50*time.Millisecond, "the timed-out turn finished and was journaled")
	apiTurnClosed(t, dev, "api:slow")
	status, body = ask("and now?")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"content":"next answer"`)
}

// apiJournal loads a session's journal without failing while it is not written yet.
func apiJournal(h *testenv.Home, key string) (*session.Session, []chat.Message, error) {
	store, err := session.NewJSONLStore(session.SessionsDir(filepath.Dir(h.ConfigPath), h.Workspace), nil)
	if err != nil {
		return nil, nil, err
	}
	sess, err := store.Load(context.Background(), key)
	if err != nil {
		return nil, nil, err
	}
	return sess, sess.Messages, nil
}

// TestAPIBackToBackRequestsOfOneSession sends a session's next request as
// soon as the previous reply arrives, as any client does. Its signal lands
// while the run is delivering; before the "inbox" version of the turn the
// receive goroutine held it in a blocked Receive while the run completed,
// and the request timed out.
func TestAPIBackToBackRequestsOfOneSession(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	for i := 0; i < 10; i++ {
		model.Script(modeltest.Text("reply " + strconv.Itoa(i)))
	}
	defer model.Close()
	s := startServe(t, dev, model, map[string]any{"timeout": 15})
	client := s.client("")
	for i := 0; i < 10; i++ {
		resp, err := client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Messages: apiUserMessage("message " + strconv.Itoa(i))})
		require.NoError(t, err, "request %d", i)
		require.Equal(t, "reply "+strconv.Itoa(i), resp.Choices[0].Message.Content)
	}
}
