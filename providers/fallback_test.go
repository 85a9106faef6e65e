package providers_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// fallbackPair wires a real client for the primary and a modeltest fallback.
func fallbackPair(t *testing.T, primary providers.Provider) (*providers.FallbackProvider, *modeltest.Server) {
	t.Helper()
	backup := newServer(t, modeltest.Text("from backup"))
	return &providers.FallbackProvider{
		Primary:   providers.Candidate{Model: "primary-model", ProviderName: "openai", Provider: primary},
		Fallbacks: []providers.Candidate{{Model: "backup-model", ProviderName: "deepseek", Provider: newProvider(backup)}},
	}, backup
}

func TestFallbackDecisions(t *testing.T) {
	cases := []struct {
		name     string
		step     modeltest.Step
		fallback bool
	}{
		{"401 auth", modeltest.Error(http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided"), true},
		{"402 payment", modeltest.Error(http.StatusPaymentRequired, "", "Payment Required"), true},
		{"403 forbidden", modeltest.Error(http.StatusForbidden, "", "Forbidden"), true},
		{"408 timeout", modeltest.Error(http.StatusRequestTimeout, "", "Request Timeout"), true},
		{"409 conflict", modeltest.Error(http.StatusConflict, "", "Conflict"), true},
		{"429 rate limit", modeltest.Error(http.StatusTooManyRequests, "rate_limit_exceeded", "Rate limit reached"), true},
		{"429 arrears", modeltest.Error(http.StatusTooManyRequests, "insufficient_quota", "You exceeded your current quota"), true},
		{"400 arrears text", modeltest.Error(http.StatusBadRequest, "", "Arrearage: account balance insufficient"), true},
		{"500", modeltest.Error(http.StatusInternalServerError, "", "Internal Server Error"), true},
		{"503", modeltest.Error(http.StatusServiceUnavailable, "", "overloaded"), true},
		{"400", modeltest.Error(http.StatusBadRequest, "", "bad request"), false},
		{"404", modeltest.Error(http.StatusNotFound, "model_not_found", "The model does not exist"), false},
		{"422", modeltest.Error(http.StatusUnprocessableEntity, "", "Unprocessable"), false},
		{"503 x-should-retry false", modeltest.Error(http.StatusServiceUnavailable, "", "down").Header("x-should-retry", "false"), false},
		{"500 context length", modeltest.Error(http.StatusInternalServerError, "context_length_exceeded", "too long"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			primary := newServer(t, tc.step)
			fp, backup := fallbackPair(t, newProvider(primary))
			resp, err := fp.Chat(testContext(t), userRequest("hi"), nil)
			if !tc.fallback {
				require.Error(t, err)
				require.Zero(t, backup.Count(), "no fallback on this error")
				return
			}
			require.NoError(t, err)
			require.Equal(t, "from backup", resp.Content)
			require.Equal(t, "backup-model", resp.Model)
			require.Equal(t, "deepseek", resp.Provider)
			require.True(t, resp.FellBack)
			require.Equal(t, "backup-model", backup.Requests()[0].Model)
		})
	}
}

func TestFallbackOnTimeout(t *testing.T) {
	primary := newServer(t, modeltest.Text("late").Delay(2*time.Second))
	fp, backup := fallbackPair(t, newProvider(primary, func(o *providers.OpenAIOptions) { o.Timeout = 100 * time.Millisecond }))
	resp, err := fp.Chat(testContext(t), userRequest("hi"), nil)
	require.NoError(t, err)
	require.True(t, resp.FellBack)
	require.Equal(t, 1, backup.Count())
}

func TestFallbackOnConnectionRefused(t *testing.T) {
	dead := modeltest.New()
	url := dead.URL()
	dead.Close()
	fp, backup := fallbackPair(t, providers.NewOpenAICompatible(providers.OpenAIOptions{BaseURL: url}))
	resp, err := fp.Chat(testContext(t), userRequest("hi"), nil)
	require.NoError(t, err)
	require.Equal(t, "from backup", resp.Content)
	require.Equal(t, 1, backup.Count())
}

func TestNoFallbackAfterStreamedContent(t *testing.T) {
	primary := newServer(t, modeltest.Text("half an answer").Abort())
	fp, backup := fallbackPair(t, newProvider(primary))
	var seen string
	_, err := fp.Chat(testContext(t), streamRequest("hi"), func(d providers.Delta) { seen += d.Content })
	require.Error(t, err)
	require.NotEmpty(t, seen)
	require.Zero(t, backup.Count(), "the user already saw text from the primary")
}

func TestFallbackAfterStreamedReasoningOnly(t *testing.T) {
	primary := newServer(t, modeltest.Reasoning("thinking…").Abort())
	fp, backup := fallbackPair(t, newProvider(primary))
	var reasoning string
	resp, err := fp.Chat(testContext(t), streamRequest("hi"), func(d providers.Delta) { reasoning += d.Reasoning })
	require.NoError(t, err, "reasoning deltas are not answer text")
	require.NotEmpty(t, reasoning)
	require.Equal(t, "from backup", resp.Content)
	require.Equal(t, 1, backup.Count())
}

func TestNoFallbackWhenCanceled(t *testing.T) {
	primary := newServer(t, modeltest.Block().Text("never"))
	fp, backup := fallbackPair(t, newProvider(primary))
	ctx, cancel := context.WithCancel(testContext(t))
	go func() {
		for primary.Waiting() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := fp.Chat(ctx, userRequest("hi"), nil)
	require.Error(t, err)
	require.Zero(t, backup.Count())
}

func TestFallbackUsesItsOwnSettings(t *testing.T) {
	primary := newServer(t, modeltest.Error(http.StatusServiceUnavailable, "", "down"))
	backup := newServer(t, modeltest.Text("ok"))
	fp := &providers.FallbackProvider{
		Primary: providers.Candidate{Model: "p", Provider: newProvider(primary)},
		Fallbacks: []providers.Candidate{{Model: "b", APIModel: "b-wire", Provider: newProvider(backup),
			Temperature: ptr(0.7), MaxTokens: 99, ReasoningEffort: ptr("low")}},
	}
	req := userRequest("hi")
	req.Temperature, req.MaxTokens, req.ReasoningEffort = ptr(0.1), 4096, "high"
	_, err := fp.Chat(testContext(t), req, nil)
	require.NoError(t, err)
	got := backup.Requests()[0]
	require.Equal(t, "b-wire", got.Model)
	require.Equal(t, 0.7, *got.Temperature)
	require.Equal(t, 99, got.MaxTokens)
	require.Equal(t, "low", got.ReasoningEffort)
	require.Equal(t, "high", primary.Requests()[0].ReasoningEffort, "the primary keeps the request's settings")
}

func TestFallbackAllFailReturnsLastError(t *testing.T) {
	primary := newServer(t, modeltest.Error(http.StatusServiceUnavailable, "", "primary down"))
	b1 := newServer(t, modeltest.Error(http.StatusBadRequest, "", "b1 rejects"))
	b2 := newServer(t, modeltest.Error(http.StatusBadGateway, "", "b2 down"))
	fp := &providers.FallbackProvider{
		Primary:   providers.Candidate{Model: "p", Provider: newProvider(primary)},
		Fallbacks: []providers.Candidate{{Model: "b1", Provider: newProvider(b1)}, {Model: "b2", Provider: newProvider(b2)}},
	}
	_, err := fp.Chat(testContext(t), userRequest("hi"), nil)
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, http.StatusBadGateway, pe.Status)
	require.Equal(t, 1, b2.Count(), "every fallback is tried in turn")
}

// scripted is a fake provider whose answers are set per call.
type scripted struct {
	mu    sync.Mutex
	calls int
	fail  bool
}

func (s *scripted) Chat(context.Context, providers.Request, func(providers.Delta)) (*providers.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.fail {
		return nil, &providers.Error{Status: http.StatusServiceUnavailable, Message: "down", Class: providers.ClassRetryable}
	}
	return &providers.Response{Content: "ok"}, nil
}

func (s *scripted) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.calls }

func TestFallbackCircuitBreaker(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	primary, backup := &scripted{fail: true}, &scripted{}
	fp := &providers.FallbackProvider{
		Primary:   providers.Candidate{Model: "p", Provider: primary},
		Fallbacks: []providers.Candidate{{Model: "b", Provider: backup}},
		Now:       func() time.Time { return now },
	}
	call := func() *providers.Response {
		resp, err := fp.Chat(context.Background(), userRequest("hi"), nil)
		require.NoError(t, err)
		return resp
	}
	for i := 1; i <= 3; i++ {
		require.Equal(t, "b", call().Model)
		require.Equal(t, i, primary.count())
	}
	require.True(t, fp.CircuitOpen(), "3 consecutive failures open the circuit")

	call()
	require.Equal(t, 3, primary.count(), "open: the primary is skipped")
	now = now.Add(59 * time.Second)
	call()
	require.Equal(t, 3, primary.count(), "still open before 60 s")

	now = now.Add(time.Second)
	call()
	require.Equal(t, 4, primary.count(), "half-open after 60 s: one probe")
	require.True(t, fp.CircuitOpen(), "a failed probe re-opens it")
	call()
	require.Equal(t, 4, primary.count())

	now = now.Add(60 * time.Second)
	primary.mu.Lock()
	primary.fail = false
	primary.mu.Unlock()
	resp := call()
	require.Equal(t, "p", resp.Model)
	require.False(t, resp.FellBack)
	require.False(t, fp.CircuitOpen(), "a successful probe closes it")
	call()
	require.Equal(t, 6, primary.count())
}

func TestFallbackCircuitNeedsConsecutiveFailures(t *testing.T) {
	primary, backup := &scripted{fail: true}, &scripted{}
	fp := &providers.FallbackProvider{Primary: providers.Candidate{Model: "p", Provider: primary},
		Fallbacks: []providers.Candidate{{Model: "b", Provider: backup}}}
	set := func(fail bool) { primary.mu.Lock(); primary.fail = fail; primary.mu.Unlock() }
	for _, fail := range []bool{true, true, false, true, true} {
		set(fail)
		_, err := fp.Chat(context.Background(), userRequest("hi"), nil)
		require.NoError(t, err)
	}
	require.False(t, fp.CircuitOpen(), "a success resets the count")
	require.Equal(t, 5, primary.count())
}

// TestFallbackIntegration: a Factory model whose primary server answers 503
// is answered by the fallback model on another server.
func TestFallbackIntegration(t *testing.T) {
	primary := newServer(t, modeltest.Error(http.StatusServiceUnavailable, "", "Service Unavailable"))
	backup := newServer(t, modeltest.Text("hello from the fallback"))
	cfg := testConfig(map[string]config.ProviderConfig{
		"vllm":   {APIBase: primary.URL()},
		"ollama": {APIBase: backup.URL()},
	})
	d := &cfg.Agents.Defaults
	d.Model, d.Provider = "qwen3-32b", "vllm"
	d.FallbackModels = []config.FallbackModel{{Model: "ollama/llama3.2", Provider: "ollama", MaxTokens: ptr(512)}}

	m, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
	require.NoError(t, err)
	require.IsType(t, &providers.FallbackProvider{}, m.Provider)
	require.Len(t, m.Fallbacks, 1)

	resp, err := m.Provider.Chat(testContext(t), userRequest("hi"), nil)
	require.NoError(t, err)
	require.Equal(t, "hello from the fallback", resp.Content)
	require.Equal(t, "ollama/llama3.2", resp.Model, "the configured name of the answering model")
	require.Equal(t, "ollama", resp.Provider)
	require.True(t, resp.FellBack)

	require.Equal(t, "qwen3-32b", primary.Requests()[0].Model)
	got := backup.Requests()[0]
	require.Equal(t, "llama3.2", got.Model, "ollama's own prefix is stripped on the wire")
	require.Equal(t, 512, got.MaxTokens)
	require.Equal(t, 0.1, *got.Temperature, "inherited from the active model")
}
