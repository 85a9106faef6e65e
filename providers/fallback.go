package providers

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Circuit defaults from nanobot's fallback_provider.py.
const (
	DefaultCircuitThreshold = 3
	DefaultCircuitCooldown  = 60 * time.Second
)

// Candidate is one model a FallbackProvider may call.
type Candidate struct {
	Model        string // configured name, reported in Response.Model
	APIModel     string // name sent as Request.Model; "" means Model
	ProviderName string
	Provider     Provider
	// A fallback's own settings replace the request's, as in nanobot; they
	// are not applied to the primary.
	Temperature     *float64
	MaxTokens       int
	ReasoningEffort *string
}

// FallbackProvider calls the primary model and, when it fails in a way
// another model might not (auth, arrears, 408/409/429/5xx, timeouts,
// connection errors), each fallback in turn until one answers. It never
// falls back on 400/404/422, after cancellation, or once answer text has
// been streamed, and skips a primary that failed Threshold times in a row
// for Cooldown (nanobot's FallbackProvider).
type FallbackProvider struct {
	Primary   Candidate
	Fallbacks []Candidate
	Threshold int              // consecutive primary failures that open the circuit; 0 = 3
	Cooldown  time.Duration    // how long an open circuit skips the primary; 0 = 60s
	Now       func() time.Time // nil = time.Now; injectable for tests
	Log       *slog.Logger     // nil = silent

	mu       sync.Mutex
	failures int
	open     bool
	openedAt time.Time
}

var _ Provider = (*FallbackProvider)(nil)

// Chat implements Provider. The error returned is the last candidate's.
func (f *FallbackProvider) Chat(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	streamed := false
	track := onDelta
	if onDelta != nil {
		track = func(d Delta) {
			if d.Content != "" {
				streamed = true // the user has seen answer text: another model must not restart it
			}
			onDelta(d)
		}
	}
	if len(f.Fallbacks) == 0 {
		return f.call(ctx, f.Primary, req, onDelta) // nothing to fall back to: no circuit either, as in nanobot
	}
	var last error
	if f.primaryAvailable() {
		resp, err := f.call(ctx, f.Primary, req, track)
		if err == nil {
			f.record(true)
			return resp, nil
		}
		pe := Classify(err)
		if streamed || ctx.Err() != nil || !ShouldFallback(pe) {
			return nil, pe
		}
		f.record(false)
		f.log("primary model failed; trying fallbacks", "model", f.Primary.Model, "error", pe.Error())
		last = pe
	} else {
		f.log("primary model circuit open; skipping it", "model", f.Primary.Model)
	}
	for _, c := range f.Fallbacks {
		fr := req
		fr.Temperature, fr.MaxTokens, fr.ReasoningEffort = c.Temperature, c.MaxTokens, ""
		if c.ReasoningEffort != nil {
			fr.ReasoningEffort = *c.ReasoningEffort
		}
		resp, err := f.call(ctx, c, fr, track)
		if err == nil {
			resp.FellBack = true
			f.log("fallback model answered", "model", c.Model, "primary", f.Primary.Model)
			return resp, nil
		}
		pe := Classify(err)
		last = pe
		if streamed || ctx.Err() != nil {
			return nil, pe
		}
		f.log("fallback model failed", "model", c.Model, "error", pe.Error())
	}
	if last == nil {
		return nil, &Error{Message: "primary model '" + f.Primary.Model + "' circuit open and no fallbacks available",
			Class: ClassRetryable}
	}
	return nil, last
}

// call names the candidate's model and labels its answer.
func (f *FallbackProvider) call(ctx context.Context, c Candidate, req Request, onDelta func(Delta)) (*Response, error) {
	req.Model = c.APIModel
	if req.Model == "" {
		req.Model = c.Model
	}
	resp, err := c.Provider.Chat(ctx, req, onDelta)
	if err != nil {
		return nil, Classify(err)
	}
	if c.Model != "" {
		resp.Model = c.Model
	}
	if c.ProviderName != "" {
		resp.Provider = c.ProviderName
	}
	return resp, nil
}

// CircuitOpen reports whether the primary is being skipped right now.
func (f *FallbackProvider) CircuitOpen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open && f.now().Sub(f.openedAt) < f.cooldown()
}

// primaryAvailable is false while the circuit is open; after the cooldown
// it lets one probe through and re-arms the timer so concurrent calls keep
// skipping until the probe's outcome is recorded.
func (f *FallbackProvider) primaryAvailable() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.open {
		return true
	}
	now := f.now()
	if now.Sub(f.openedAt) < f.cooldown() {
		return false
	}
	f.openedAt = now
	return true
}

func (f *FallbackProvider) record(ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ok {
		f.failures, f.open = 0, false
		return
	}
	f.failures++
	threshold := f.Threshold
	if threshold <= 0 {
		threshold = DefaultCircuitThreshold
	}
	if f.failures >= threshold {
		if !f.open {
			f.log("primary model circuit open", "model", f.Primary.Model, "failures", f.failures)
		}
		f.open, f.openedAt = true, f.now()
	}
}

func (f *FallbackProvider) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *FallbackProvider) cooldown() time.Duration {
	if f.Cooldown > 0 {
		return f.Cooldown
	}
	return DefaultCircuitCooldown
}

func (f *FallbackProvider) log(msg string, args ...any) {
	if f.Log != nil {
		f.Log.Warn(msg, args...)
	}
}

// Error tokens from nanobot's fallback_provider.py.
var (
	authTokens = []string{
		"authentication_error", "authentication error", "invalid_api_key", "invalid api key",
		"incorrect_api_key", "incorrect api key", "expired_api_key", "expired api key",
		"invalid credential", "expired credential", "invalid_token", "invalid token",
		"expired_token", "expired token", "unauthorized", "permission_denied",
		"permission denied", "access_denied", "account_deactivated", "organization_deactivated",
	}
	noFallbackTokens = []string{"content_filter", "refusal", "context_length", "invalid_request"}
	fallbackTokens   = []string{
		"rate_limit", "rate limit", "too_many_requests", "too many requests", "overloaded",
		"server_error", "server error", "temporarily unavailable", "timeout", "timed out", "connection",
	}
)

// ShouldFallback is nanobot's _should_fallback: whether another model might
// succeed where this error's model failed.
func ShouldFallback(e *Error) bool {
	if e == nil || e.Kind == KindCanceled {
		return false
	}
	if isArrears(e) {
		return true
	}
	structured := []string{strings.ToLower(e.Code), strings.ToLower(e.Type)}
	text := strings.ToLower(e.Message)
	if containsAny(structured, authTokens) {
		return true
	}
	if containsAny(structured, noFallbackTokens) {
		return false
	}
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || containsAny([]string{text}, authTokens) {
		return true
	}
	if e.shouldRetry != nil && !*e.shouldRetry {
		return false
	}
	switch e.Status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity:
		return false
	}
	if e.shouldRetry != nil {
		return true
	}
	if s := e.Status; s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500 && s <= 599 {
		return true
	}
	switch e.Kind {
	case KindTimeout, KindConnection, KindEmpty, KindMalformed:
		return true
	}
	return containsAny(append(structured, text), fallbackTokens)
}

func containsAny(values, tokens []string) bool {
	for _, v := range values {
		for _, t := range tokens {
			if v != "" && strings.Contains(v, t) {
				return true
			}
		}
	}
	return false
}
