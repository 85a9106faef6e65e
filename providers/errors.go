package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Class says what the caller should do about an error.
type Class int

// Error classes. The zero value means "not classified yet".
const (
	ClassRetryable Class = iota + 1
	ClassNonRetryable
	// ClassArrears is a billing/quota failure: not retryable, and nanobot
	// answers the user with a dedicated top-up message.
	ClassArrears
)

// String gives a stable name, usable as a Temporal ApplicationError type.
func (c Class) String() string {
	switch c {
	case ClassRetryable:
		return "retryable"
	case ClassNonRetryable:
		return "non_retryable"
	case ClassArrears:
		return "arrears"
	default:
		return "unclassified"
	}
}

// Kinds of failure that have no HTTP status.
const (
	KindTimeout    = "timeout"
	KindConnection = "connection"
	KindCanceled   = "canceled"
	KindEmpty      = "empty"     // 200 with no choices
	KindMalformed  = "malformed" // 200 whose body is not the JSON it should be: a mangled reply, worth a retry
)

// Error is a provider failure with what is known about it.
type Error struct {
	Status     int    // HTTP status, 0 when none was received
	Code       string // provider error code, e.g. "insufficient_quota"
	Type       string // provider error type, e.g. "invalid_request_error"
	Message    string // provider's message, or what went wrong locally
	Kind       string // KindTimeout, KindConnection, KindCanceled, KindEmpty, KindMalformed or ""
	RetryAfter time.Duration
	Class      Class
	Err        error

	shouldRetry *bool // x-should-retry header, when the server sent one
}

// Error is the text nanobot shows the user as the reply.
func (e *Error) Error() string {
	msg := e.Message
	if e.Code != "" && !strings.Contains(msg, e.Code) {
		msg = strings.TrimSpace(msg + " (" + e.Code + ")")
	}
	if e.Status > 0 {
		return fmt.Sprintf("Error: %d %s", e.Status, msg)
	}
	return "Error calling LLM: " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether a retry may succeed.
func (e *Error) Retryable() bool { return e.Class == ClassRetryable }

// Classify turns any error into a classified *Error. An *Error in the chain
// is returned as is (classified first if it was not).
func Classify(err error) *Error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		if pe.Class == 0 {
			pe.Class = classOf(pe)
		}
		return pe
	}
	pe = describe(err)
	pe.Class = classOf(pe)
	return pe
}

// describe fills an Error from what go-openai, the Anthropic SDK and net/http return.
func describe(err error) *Error {
	e := &Error{Err: err}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.Is(err, context.Canceled):
		e.Kind, e.Message = KindCanceled, "request canceled"
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Message = KindTimeout, "timed out ("+err.Error()+")"
	case describeAnthropic(err, e):
	case errors.As(err, &apiErr):
		e.Status = apiErr.HTTPStatusCode
		e.Code = codeString(apiErr.Code)
		e.Type = apiErr.Type
		e.Message = apiErr.Message
		if e.Status == 0 {
			// Mid-stream error events carry no HTTP status; some gateways put it in code.
			if n, ok := apiErr.Code.(int); ok && n >= 400 && n < 600 {
				e.Status = n
			}
		}
		if e.Message == "" {
			e.Message = http.StatusText(e.Status)
		}
	case errors.As(err, &reqErr):
		e.Status = reqErr.HTTPStatusCode
		e.Code, e.Type, e.Message = parseErrorBody(reqErr.Body)
		if e.Message == "" {
			e.Message = http.StatusText(e.Status)
		}
	case isTimeout(err):
		e.Kind, e.Message = KindTimeout, "timed out ("+err.Error()+")"
	case isConnection(err):
		e.Kind, e.Message = KindConnection, "connection error: "+err.Error()
	default:
		e.Message = err.Error()
	}
	if e.RetryAfter == 0 {
		e.RetryAfter = retryAfterFromText(e.Message)
	}
	return e
}

// Tokens and texts that mean "out of money", whatever the status (nanobot's
// _NON_RETRYABLE_429_ERROR_TOKENS and _TEXT_MARKERS, plus "arrear").
var (
	arrearsTokens = []string{
		"insufficient_quota", "quota_exceeded", "quota_exhausted",
		"billing_hard_limit_reached", "insufficient_balance",
		"credit_balance_too_low", "billing_not_active", "payment_required",
		"billing_error", // Anthropic's error type for an unpaid account
	}
	arrearsTexts = []string{
		"insufficient_quota", "insufficient quota", "quota exceeded",
		"quota exhausted", "billing hard limit", "billing_hard_limit_reached",
		"billing not active", "insufficient balance", "insufficient_balance",
		"credit balance too low", "payment required", "out of credits",
		"out of quota", "exceeded your current quota", "arrear",
		"credit balance is too low", // Anthropic's wording
	}
	// transientTexts classify errors that carry neither status nor kind.
	transientTexts = []string{
		"rate limit", "overloaded", "timeout", "timed out", "connection",
		"server error", "temporarily unavailable", "502", "503", "504",
	}
)

func classOf(e *Error) Class {
	if e.Kind == KindCanceled {
		return ClassNonRetryable
	}
	if isArrears(e) {
		return ClassArrears
	}
	if e.shouldRetry != nil {
		if *e.shouldRetry {
			return ClassRetryable
		}
		return ClassNonRetryable
	}
	switch s := e.Status; {
	case s == http.StatusRequestTimeout, s == http.StatusConflict, s == http.StatusTooManyRequests, s >= 500:
		return ClassRetryable
	case s >= 400:
		return ClassNonRetryable
	}
	if e.Kind == KindTimeout || e.Kind == KindConnection || e.Kind == KindMalformed {
		return ClassRetryable
	}
	text := strings.ToLower(e.Message)
	for _, m := range transientTexts {
		if strings.Contains(text, m) {
			return ClassRetryable
		}
	}
	return ClassNonRetryable
}

func isArrears(e *Error) bool {
	if e.Status == http.StatusPaymentRequired {
		return true
	}
	code, typ := strings.ToLower(e.Code), strings.ToLower(e.Type)
	for _, t := range arrearsTokens {
		if code == t || typ == t {
			return true
		}
	}
	text := strings.ToLower(e.Message)
	for _, m := range arrearsTexts {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isConnection(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	return errors.As(err, &dnsErr) || errors.As(err, &opErr)
}

func codeString(code any) string {
	switch c := code.(type) {
	case nil:
		return ""
	case string:
		return c
	default:
		return fmt.Sprint(c)
	}
}

// parseErrorBody reads the error bodies go-openai could not: {"error":"text"},
// {"message":...}, {"detail":...}, or plain text.
func parseErrorBody(body []byte) (code, typ, message string) {
	text := strings.TrimSpace(string(body))
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return "", "", truncate(text, 500)
	}
	if inner, ok := m["error"].(map[string]any); ok {
		m = inner
	}
	code = codeString(m["code"])
	typ, _ = m["type"].(string)
	for _, k := range []string{"message", "error", "detail", "msg"} {
		if s, ok := m[k].(string); ok && s != "" {
			return code, typ, s
		}
	}
	return code, typ, truncate(text, 500)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// applyHeaders takes Retry-After / retry-after-ms / x-should-retry from the
// response go-openai's errors do not carry.
func (e *Error) applyHeaders(h http.Header) {
	if h == nil {
		return
	}
	if d, ok := retryAfterFromHeaders(h, time.Now()); ok {
		e.RetryAfter = d
	}
	switch strings.ToLower(strings.TrimSpace(h.Get("x-should-retry"))) {
	case "true":
		v := true
		e.shouldRetry = &v
	case "false":
		v := false
		e.shouldRetry = &v
	}
}

func retryAfterFromHeaders(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if at, err := http.ParseTime(v); err == nil {
		d := at.Sub(now)
		if d < 100*time.Millisecond {
			d = 100 * time.Millisecond // nanobot's floor for a past date
		}
		return d, true
	}
	return 0, false
}

// retryAfterPatterns read waits from messages such as "Please try again in 20s".
var retryAfterPatterns = []*regexp.Regexp{
	regexp.MustCompile(`retry after\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds|s|sec|secs|seconds|m|min|minutes)?\b`),
	regexp.MustCompile(`try again in\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds|s|sec|secs|seconds|m|min|minutes)\b`),
}

func retryAfterFromText(msg string) time.Duration {
	text := strings.ToLower(msg)
	for _, re := range retryAfterPatterns {
		m := re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		unit := time.Second
		switch m[2] {
		case "ms", "milliseconds":
			unit = time.Millisecond
		case "m", "min", "minutes":
			unit = time.Minute
		}
		return time.Duration(v * float64(unit))
	}
	return 0
}
