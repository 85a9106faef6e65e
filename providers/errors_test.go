package providers_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

func TestHTTPErrorClassification(t *testing.T) {
	cases := []struct {
		name       string
		step       modeltest.Step
		class      providers.Class
		retryAfter time.Duration
		text       string
	}{
		{name: "400 bad request", step: modeltest.Error(400, "", "messages: invalid"), class: providers.ClassNonRetryable, text: "Error: 400 messages: invalid"},
		{name: "401 auth", step: modeltest.Error(401, "invalid_api_key", "bad key"), class: providers.ClassNonRetryable},
		{name: "403 forbidden", step: modeltest.Error(403, "", "forbidden"), class: providers.ClassNonRetryable},
		{name: "404 model", step: modeltest.Error(404, "model_not_found", "no such model"), class: providers.ClassNonRetryable},
		{name: "408 timeout", step: modeltest.Error(408, "", "request timeout"), class: providers.ClassRetryable},
		{name: "409 conflict", step: modeltest.Error(409, "", "conflict"), class: providers.ClassRetryable},
		{name: "422 unprocessable", step: modeltest.Error(422, "", "bad schema"), class: providers.ClassNonRetryable},
		{
			name:  "429 rate limit with Retry-After seconds",
			step:  modeltest.Error(429, "rate_limit_exceeded", "Rate limit reached").RetryAfter("3"),
			class: providers.ClassRetryable, retryAfter: 3 * time.Second,
			text: "Error: 429 Rate limit reached (rate_limit_exceeded)",
		},
		{
			name:  "429 with retry-after-ms",
			step:  modeltest.Error(429, "", "slow down").RetryAfterMS(1500).RetryAfter("9"),
			class: providers.ClassRetryable, retryAfter: 1500 * time.Millisecond,
		},
		{
			name:  "429 wait in message",
			step:  modeltest.Error(429, "", "Rate limit reached. Please try again in 20s."),
			class: providers.ClassRetryable, retryAfter: 20 * time.Second,
		},
		{name: "429 insufficient_quota code", step: modeltest.Error(429, "insufficient_quota", "You exceeded your current quota, please check your plan"), class: providers.ClassArrears},
		{name: "429 quota in type", step: modeltest.Error(429, "", "no money").Type("insufficient_quota"), class: providers.ClassArrears},
		{name: "429 billing_hard_limit_reached", step: modeltest.Error(429, "billing_hard_limit_reached", "Billing hard limit has been reached"), class: providers.ClassArrears},
		{name: "402 payment required", step: modeltest.Error(402, "", "Payment Required"), class: providers.ClassArrears},
		{name: "400 arrears text", step: modeltest.Error(400, "Arrearage", "Access denied, please make sure your account is in good standing (arrearage)"), class: providers.ClassArrears},
		{name: "403 insufficient balance", step: modeltest.Error(403, "", "Insufficient Balance"), class: providers.ClassArrears},
		{name: "500", step: modeltest.Error(500, "", "internal error"), class: providers.ClassRetryable},
		{name: "502", step: modeltest.Error(502, "", "bad gateway"), class: providers.ClassRetryable},
		{name: "503 overloaded", step: modeltest.Error(503, "", "overloaded"), class: providers.ClassRetryable},
		{name: "x-should-retry false wins over 503", step: modeltest.Error(503, "", "down").Header("x-should-retry", "false"), class: providers.ClassNonRetryable},
		{name: "x-should-retry true wins over 400", step: modeltest.Error(400, "", "odd").Header("x-should-retry", "true"), class: providers.ClassRetryable},
		{name: "x-should-retry does not hide arrears", step: modeltest.Error(429, "insufficient_quota", "quota").Header("x-should-retry", "true"), class: providers.ClassArrears},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				srv := newServer(t, tc.step)
				req := userRequest("hi")
				req.Stream = stream
				resp, err := newProvider(srv).Chat(testContext(t), req, nil)
				require.Nil(t, resp)
				var perr *providers.Error
				require.ErrorAs(t, err, &perr, "every failure is a *providers.Error")
				require.Equal(t, tc.class, perr.Class)
				require.NotZero(t, perr.Status)
				require.Equal(t, tc.retryAfter, perr.RetryAfter)
				if tc.text != "" {
					require.Equal(t, tc.text, perr.Error())
				}
				require.Contains(t, perr.Error(), fmt.Sprint(perr.Status))
			})
		}
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	at := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	srv := newServer(t, modeltest.Error(503, "", "busy").RetryAfter(at))
	_, err := newProvider(srv).Chat(testContext(t), userRequest("hi"), nil)
	perr := providers.Classify(err)
	require.InDelta(t, 30, perr.RetryAfter.Seconds(), 2)
}

func TestScriptExhaustedIsAClearError(t *testing.T) {
	srv := newServer(t)
	_, err := newProvider(srv).Chat(testContext(t), userRequest("hi"), nil)
	perr := providers.Classify(err)
	require.Equal(t, 500, perr.Status)
	require.Equal(t, "Error: 500 modeltest: script exhausted", perr.Error())
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	p := providers.NewOpenAICompatible(providers.OpenAIOptions{BaseURL: "http://" + addr + "/v1"})
	for _, stream := range []bool{false, true} {
		req := userRequest("hi")
		req.Stream = stream
		_, err := p.Chat(testContext(t), req, nil)
		var perr *providers.Error
		require.ErrorAs(t, err, &perr)
		require.Equal(t, providers.KindConnection, perr.Kind)
		require.Equal(t, providers.ClassRetryable, perr.Class)
		require.Contains(t, perr.Error(), "Error calling LLM: connection error")
		require.ErrorIs(t, err, syscall.ECONNREFUSED)
	}
}

func TestRequestTimeout(t *testing.T) {
	srv := newServer(t, modeltest.Text("too late").Delay(5*time.Second))
	p := newProvider(srv, func(o *providers.OpenAIOptions) { o.Timeout = 200 * time.Millisecond })
	start := time.Now()
	_, err := p.Chat(testContext(t), userRequest("hi"), nil)
	require.Less(t, time.Since(start), 3*time.Second)
	perr := providers.Classify(err)
	require.Equal(t, providers.KindTimeout, perr.Kind)
	require.Equal(t, providers.ClassRetryable, perr.Class)
	require.Equal(t, "Error calling LLM: timed out after 0.2s", perr.Error())
}

func TestStreamIdleTimeout(t *testing.T) {
	cases := map[string]modeltest.Step{
		"stall between chunks": modeltest.Text("one two three four").ChunkDelay(3 * time.Second),
		"no bytes at all":      modeltest.Block().Text("never"),
	}
	for name, step := range cases {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, step)
			p := newProvider(srv, func(o *providers.OpenAIOptions) { o.StreamIdleTimeout = 300 * time.Millisecond })
			start := time.Now()
			_, err := p.Chat(testContext(t), streamRequest("hi"), nil)
			require.Less(t, time.Since(start), 2*time.Second)
			perr := providers.Classify(err)
			require.Equal(t, providers.KindTimeout, perr.Kind)
			require.Equal(t, providers.ClassRetryable, perr.Class)
			require.Equal(t, "Error calling LLM: stream stalled for more than 0.3 seconds", perr.Error())
		})
	}
}

func TestStreamIdleTimeoutIsPerByte(t *testing.T) {
	// Chunks every 100ms keep a 400ms idle limit happy for well over 400ms.
	srv := newServer(t, modeltest.Text("a steady stream of words").ChunkDelay(100*time.Millisecond))
	p := newProvider(srv, func(o *providers.OpenAIOptions) { o.StreamIdleTimeout = 400 * time.Millisecond })
	resp, err := p.Chat(testContext(t), streamRequest("hi"), nil)
	require.NoError(t, err)
	require.Equal(t, "a steady stream of words", resp.Content)
}

func TestCallerCancellation(t *testing.T) {
	srv := newServer(t, modeltest.Block().Text("never"))
	ctx, cancel := context.WithCancel(testContext(t))
	errc := make(chan error, 1)
	go func() {
		_, err := newProvider(srv).Chat(ctx, userRequest("hi"), nil)
		errc <- err
	}()
	require.Eventually(t, func() bool { return srv.Waiting() == 1 }, 5*time.Second, 10*time.Millisecond)
	cancel()
	perr := providers.Classify(<-errc)
	require.Equal(t, providers.KindCanceled, perr.Kind)
	require.Equal(t, providers.ClassNonRetryable, perr.Class)
	require.ErrorIs(t, perr, context.Canceled)
	require.Eventually(t, func() bool { return srv.Waiting() == 0 }, 5*time.Second, 10*time.Millisecond,
		"the server sees the client go away")
}

func TestClassifyPlainErrors(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		class providers.Class
		kind  string
	}{
		{"canceled", fmt.Errorf("call: %w", context.Canceled), providers.ClassNonRetryable, providers.KindCanceled},
		{"deadline", context.DeadlineExceeded, providers.ClassRetryable, providers.KindTimeout},
		{"eof", fmt.Errorf("read: %w", io.EOF), providers.ClassRetryable, providers.KindConnection},
		{"unexpected eof", io.ErrUnexpectedEOF, providers.ClassRetryable, providers.KindConnection},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, providers.ClassRetryable, providers.KindConnection},
		{"dns", &net.DNSError{Err: "no such host", Name: "api.example.invalid"}, providers.ClassRetryable, providers.KindConnection},
		{"api 429 quota", &openai.APIError{HTTPStatusCode: 429, Code: "insufficient_quota", Message: "quota"}, providers.ClassArrears, ""},
		{"api 503", &openai.APIError{HTTPStatusCode: 503, Message: "unavailable"}, providers.ClassRetryable, ""},
		{"mid-stream error with numeric code", fmt.Errorf("error, %w", &openai.APIError{Code: 502, Message: "upstream"}), providers.ClassRetryable, ""},
		{"request error with text body", &openai.RequestError{HTTPStatusCode: 504, Body: []byte("<html>gateway timeout</html>")}, providers.ClassRetryable, ""},
		{"request error string body", &openai.RequestError{HTTPStatusCode: 400, Body: []byte(`{"error":"model is required"}`)}, providers.ClassNonRetryable, ""},
		{"unknown", errors.New("boom"), providers.ClassNonRetryable, ""},
		{"unknown but overloaded", errors.New("server overloaded"), providers.ClassRetryable, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			perr := providers.Classify(tc.err)
			require.Equal(t, tc.class, perr.Class)
			require.Equal(t, tc.kind, perr.Kind)
			require.ErrorIs(t, perr, tc.err)
		})
	}

	require.Nil(t, providers.Classify(nil))
	orig := &providers.Error{Status: 418, Message: "teapot"}
	wrapped := fmt.Errorf("activity: %w", orig)
	require.Same(t, orig, providers.Classify(wrapped))
	require.Equal(t, providers.ClassNonRetryable, orig.Class, "an unclassified *Error gets classified")
	require.Equal(t, "model is required", providers.Classify(&openai.RequestError{HTTPStatusCode: 400, Body: []byte(`{"error":"model is required"}`)}).Message)
}

func TestClassString(t *testing.T) {
	require.Equal(t, "retryable", providers.ClassRetryable.String())
	require.Equal(t, "non_retryable", providers.ClassNonRetryable.String())
	require.Equal(t, "arrears", providers.ClassArrears.String())
}
