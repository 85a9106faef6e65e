package providers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// newServer starts a scripted model server closed with the test.
func newServer(t *testing.T, steps ...modeltest.Step) *modeltest.Server {
	t.Helper()
	srv := modeltest.New(steps...)
	t.Cleanup(srv.Close)
	return srv
}

// newProvider points a provider at srv; edit tweaks the options.
func newProvider(srv *modeltest.Server, edit ...func(*providers.OpenAIOptions)) *providers.OpenAICompatible {
	opts := providers.OpenAIOptions{BaseURL: srv.URL(), APIKey: "sk-test"}
	for _, e := range edit {
		e(&opts)
	}
	return providers.NewOpenAICompatible(opts)
}

func userRequest(text string) providers.Request {
	return providers.Request{
		Model:    "test-model",
		Messages: []chat.Message{{Role: chat.RoleUser, Content: text}},
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestChatText(t *testing.T) {
	srv := newServer(t, modeltest.Text("Hello there").Usage(12, 3))
	resp, err := newProvider(srv).Chat(testContext(t), userRequest("hi"), nil)
	require.NoError(t, err)
	require.Equal(t, "Hello there", resp.Content)
	require.Equal(t, "stop", resp.FinishReason)
	require.Equal(t, providers.Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15}, resp.Usage)
	require.Equal(t, "test-model", resp.Model)
	require.Empty(t, resp.ToolCalls)

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	require.False(t, reqs[0].Stream)
	require.Equal(t, "test-model", reqs[0].Model)
	require.Equal(t, "hi", reqs[0].Messages[0].Content)
}

func TestChatToolCalls(t *testing.T) {
	srv := newServer(t, modeltest.ToolCalls(
		modeltest.Call{ID: "call_1", Name: "read_file", Args: `{"path":"notes/today.md"}`},
		modeltest.Call{ID: "call_2", Name: "exec", Args: `{"command":"ls -la"}`},
	))
	resp, err := newProvider(srv).Chat(testContext(t), userRequest("look"), nil)
	require.NoError(t, err)
	require.Equal(t, "tool_calls", resp.FinishReason)
	require.Empty(t, resp.Content)
	require.Equal(t, []chat.ToolCall{
		{ID: "call_1", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"notes/today.md"}`}},
		{ID: "call_2", Type: "function", Function: chat.FunctionCall{Name: "exec", Arguments: `{"command":"ls -la"}`}},
	}, resp.ToolCalls)
}

func TestChatToolCallsGetIDsAndArguments(t *testing.T) {
	srv := newServer(t, modeltest.ToolCalls(
		modeltest.Call{Name: "list_dir"},
		modeltest.Call{ID: "dup", Name: "a", Args: "{}"},
		modeltest.Call{ID: "dup", Name: "b", Args: "{}"},
	))
	resp, err := newProvider(srv).Chat(testContext(t), userRequest("go"), nil)
	require.NoError(t, err)
	require.Len(t, resp.ToolCalls, 3)
	require.Len(t, resp.ToolCalls[0].ID, 9, "a missing id is generated")
	require.Equal(t, "{}", resp.ToolCalls[0].Function.Arguments, "empty arguments become an empty object")
	require.Equal(t, "dup", resp.ToolCalls[1].ID)
	require.NotEqual(t, "dup", resp.ToolCalls[2].ID, "a reused id is replaced")
}

func TestChatReasoningContent(t *testing.T) {
	srv := newServer(t, modeltest.Reasoning("The user wants 6*7.").Text("42"))
	resp, err := newProvider(srv).Chat(testContext(t), userRequest("6*7?"), nil)
	require.NoError(t, err)
	require.Equal(t, "42", resp.Content)
	require.Equal(t, "The user wants 6*7.", resp.ReasoningContent)
}

func TestChatThinkTags(t *testing.T) {
	srv := newServer(t,
		modeltest.Text("<think>\nweigh options\n</think>\n\nUse the blue one."),
		modeltest.Reasoning("from the field").Text("<think>inline</think>Answer"),
	)
	p := newProvider(srv)

	resp, err := p.Chat(testContext(t), userRequest("which?"), nil)
	require.NoError(t, err)
	require.Equal(t, "Use the blue one.", resp.Content)
	require.Equal(t, "weigh options", resp.ReasoningContent)

	resp, err = p.Chat(testContext(t), userRequest("again"), nil)
	require.NoError(t, err)
	require.Equal(t, "Answer", resp.Content, "think tags never stay in content")
	require.Equal(t, "from the field", resp.ReasoningContent, "reasoning_content wins over inline blocks")
}

func TestChatFinishLength(t *testing.T) {
	srv := newServer(t, modeltest.Text("The answer is trunc").Finish("length"))
	resp, err := newProvider(srv).Chat(testContext(t), userRequest("long"), nil)
	require.NoError(t, err)
	require.Equal(t, "length", resp.FinishReason)
	require.Equal(t, "The answer is trunc", resp.Content)
}

func TestChatAuthorizationHeader(t *testing.T) {
	srv := newServer(t, modeltest.Text("welcome"))
	srv.RequireKey("sk-right")

	_, err := newProvider(srv, func(o *providers.OpenAIOptions) { o.APIKey = "sk-wrong" }).
		Chat(testContext(t), userRequest("hi"), nil)
	perr := providers.Classify(err)
	require.Equal(t, 401, perr.Status)
	require.Equal(t, providers.ClassNonRetryable, perr.Class)
	require.Equal(t, "Error: 401 Incorrect API key provided (invalid_api_key)", perr.Error())
	require.Equal(t, 1, srv.Remaining(), "a rejected request consumes no step")

	resp, err := newProvider(srv, func(o *providers.OpenAIOptions) { o.APIKey = "sk-right" }).
		Chat(testContext(t), userRequest("hi"), nil)
	require.NoError(t, err)
	require.Equal(t, "welcome", resp.Content)

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, "Bearer sk-wrong", reqs[0].Header.Get("Authorization"))
	require.Equal(t, "Bearer sk-right", reqs[1].Header.Get("Authorization"))
}

func TestChatHandleAfterScript(t *testing.T) {
	srv := newServer(t, modeltest.Text("scripted"))
	srv.Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		return modeltest.Text("echo: " + req.Messages[len(req.Messages)-1].Content)
	})
	p := newProvider(srv)

	resp, err := p.Chat(testContext(t), userRequest("one"), nil)
	require.NoError(t, err)
	require.Equal(t, "scripted", resp.Content)
	resp, err = p.Chat(testContext(t), userRequest("two"), nil)
	require.NoError(t, err)
	require.Equal(t, "echo: two", resp.Content)
	require.Equal(t, 2, srv.Count())
}

func TestChatBlockAndRelease(t *testing.T) {
	srv := newServer(t, modeltest.Block().Text("released"))
	p := newProvider(srv)

	type result struct {
		resp *providers.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := p.Chat(testContext(t), userRequest("wait"), nil)
		done <- result{resp, err}
	}()
	require.Eventually(t, func() bool { return srv.Waiting() == 1 }, 5*time.Second, 10*time.Millisecond)
	select {
	case <-done:
		t.Fatal("blocked request answered before Release")
	case <-time.After(50 * time.Millisecond):
	}
	srv.Release()
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, "released", r.resp.Content)
}
