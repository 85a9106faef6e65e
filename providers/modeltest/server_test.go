package modeltest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

func post(t *testing.T, srv *modeltest.Server, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// events reads the data lines of an SSE body.
func events(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, line)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

func TestURLIsLoopbackV1(t *testing.T) {
	srv := modeltest.New()
	defer srv.Close()
	require.True(t, strings.HasPrefix(srv.URL(), "http://127.0.0.1:"))
	require.True(t, strings.HasSuffix(srv.URL(), "/v1"))
}

func TestStreamWireShape(t *testing.T) {
	srv := modeltest.New(modeltest.Text("abcdef").ToolCalls(modeltest.Call{ID: "c1", Name: "f", Args: `{"a":1}`}))
	defer srv.Close()
	resp := post(t, srv, `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	ev := events(t, resp.Body)

	require.Equal(t, "[DONE]", ev[len(ev)-1])
	var first struct {
		Choices []struct {
			Delta map[string]any `json:"delta"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal([]byte(ev[0]), &first))
	require.Equal(t, "assistant", first.Choices[0].Delta["role"], "role comes first")

	var usage struct {
		Choices []any          `json:"choices"`
		Usage   map[string]int `json:"usage"`
	}
	require.NoError(t, json.Unmarshal([]byte(ev[len(ev)-2]), &usage))
	require.Empty(t, usage.Choices)
	require.NotZero(t, usage.Usage["total_tokens"])
	require.Contains(t, ev[len(ev)-3], `"finish_reason":"tool_calls"`)

	var argPieces int
	for _, e := range ev {
		if strings.Contains(e, `"arguments":"`) && !strings.Contains(e, `"name"`) {
			argPieces++
		}
	}
	require.Greater(t, argPieces, 1, "arguments arrive in pieces")
}

func TestStreamWithoutUsage(t *testing.T) {
	srv := modeltest.New(modeltest.Text("hi"))
	defer srv.Close()
	ev := events(t, post(t, srv, `{"model":"m","messages":[],"stream":true}`).Body)
	for _, e := range ev {
		require.NotContains(t, e, `"usage"`)
	}
}

func TestNonStreamToolCallContentIsNull(t *testing.T) {
	srv := modeltest.New(modeltest.ToolCalls(modeltest.Call{ID: "c1", Name: "f", Args: "{}"}))
	defer srv.Close()
	body, err := io.ReadAll(post(t, srv, `{"model":"m","messages":[]}`).Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `"content":null`)
	require.Contains(t, string(body), `"finish_reason":"tool_calls"`)
}

func TestScriptExhaustedBody(t *testing.T) {
	srv := modeltest.New()
	defer srv.Close()
	resp := post(t, srv, `{"model":"m","messages":[]}`)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.JSONEq(t, `{"error":{"message":"modeltest: script exhausted"}}`, string(body))
	require.Equal(t, 1, srv.Count())
}

func TestUnknownRoute(t *testing.T) {
	srv := modeltest.New(modeltest.Text("unused"))
	defer srv.Close()
	resp, err := http.Get(srv.URL() + "/models")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, 1, srv.Remaining())
}

func TestCloseReleasesBlockedRequests(t *testing.T) {
	srv := modeltest.New(modeltest.Block().Text("never"), modeltest.Text("slow").ChunkDelay(time.Hour))
	errc := make(chan error, 2)
	for range 2 {
		go func() {
			resp, err := http.Post(srv.URL()+"/chat/completions", "application/json",
				strings.NewReader(`{"model":"m","messages":[],"stream":true}`))
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				_ = resp.Body.Close()
			}
			errc <- err
		}()
	}
	require.Eventually(t, func() bool { return srv.Count() == 2 && srv.Waiting() == 1 }, 5*time.Second, 10*time.Millisecond)
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung on held requests")
	}
	<-errc
	<-errc
}
