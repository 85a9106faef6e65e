package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"
)

func TestSSEWriterWireFormat(t *testing.T) {
	rec := httptest.NewRecorder()
	s := newSSEWriter(rec, "chatcmpl-abc", 1700000000, "test-model")
	require.NoError(t, s.Role())
	require.NoError(t, s.Content("Hel"))
	require.NoError(t, s.Content("")) // sends nothing
	require.NoError(t, s.Content("lo \"q\"\n"))
	require.NoError(t, s.Finish("stop"))
	require.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))
	require.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	require.Equal(t, ""+
		`data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"test-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n"+
		`data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"test-model","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`+"\n\n"+
		`data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"test-model","choices":[{"index":0,"delta":{"content":"lo \"q\"\n"},"finish_reason":null}]}`+"\n\n"+
		`data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"test-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+
		"data: [DONE]\n\n", rec.Body.String())
}

// sseServer answers every request with what write puts on an sseWriter.
func sseServer(t *testing.T, write func(*sseWriter)) *openai.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write(newSSEWriter(w, "chatcmpl-1", 1700000000, "test-model"))
	}))
	t.Cleanup(srv.Close)
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.URL + "/v1"
	return openai.NewClientWithConfig(cfg)
}

func streamRequest() openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Model: "test-model", Stream: true,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}}}
}

func TestSSEWriterParsedByGoOpenAI(t *testing.T) {
	client := sseServer(t, func(s *sseWriter) {
		_ = s.Role()
		for _, p := range []string{"Hello", ", ", "wörld ✓"} {
			_ = s.Content(p)
		}
		_ = s.Finish("stop")
	})
	stream, err := client.CreateChatCompletionStream(context.Background(), streamRequest())
	require.NoError(t, err)
	defer stream.Close()
	var text strings.Builder
	var roles []string
	var finish []openai.FinishReason
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.Equal(t, "chatcmpl-1", resp.ID)
		require.Equal(t, "chat.completion.chunk", resp.Object)
		require.Equal(t, "test-model", resp.Model)
		require.Len(t, resp.Choices, 1)
		if resp.Choices[0].Delta.Role != "" {
			roles = append(roles, resp.Choices[0].Delta.Role)
		}
		text.WriteString(resp.Choices[0].Delta.Content)
		if resp.Choices[0].FinishReason != "" {
			finish = append(finish, resp.Choices[0].FinishReason)
		}
	}
	require.Equal(t, "Hello, wörld ✓", text.String())
	require.Equal(t, []string{"assistant"}, roles)
	require.Equal(t, []openai.FinishReason{openai.FinishReasonStop}, finish)
}

func TestSSEWriterFailIsAnAPIErrorForGoOpenAI(t *testing.T) {
	client := sseServer(t, func(s *sseWriter) {
		_ = s.Role()
		_ = s.Content("partial")
		_ = s.Fail(serverError(http.StatusGatewayTimeout, "Request timed out after 2.0s"))
	})
	stream, err := client.CreateChatCompletionStream(context.Background(), streamRequest())
	require.NoError(t, err)
	defer stream.Close()
	var got []string
	for {
		resp, err := stream.Recv()
		if err != nil {
			var apiErr *openai.APIError
			require.ErrorAs(t, err, &apiErr, "the stream must end in an API error, not EOF: %v", err)
			require.Equal(t, "Request timed out after 2.0s", apiErr.Message)
			require.Equal(t, "server_error", apiErr.Type)
			require.EqualValues(t, 504, apiErr.Code)
			break
		}
		got = append(got, resp.Choices[0].Delta.Content)
	}
	require.Equal(t, []string{"", "partial"}, got)
}
