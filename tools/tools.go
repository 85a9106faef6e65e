// Package tools holds the tool registry the agent loop calls through and the
// built-in tools. Tool failures are text results for the model, never Go
// errors: the model reads them and tries something else, as in nanobot.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Flags tell the runner and the durable layer how a tool may be scheduled.
type Flags struct {
	// ReadOnly tools change nothing outside the process.
	ReadOnly bool
	// Exclusive tools run alone even when they are read-only (exec, …).
	Exclusive bool
	// SideEffects tools get a journaled claim before they run, so a replay
	// never repeats them blindly (write_file, edit_file, exec, …).
	SideEffects bool
}

// ConcurrencySafe reports whether the tool may run in parallel with other
// concurrency-safe tools of the same batch (nanobot: read_only and not exclusive).
func (f Flags) ConcurrencySafe() bool { return f.ReadOnly && !f.Exclusive }

// Tool is one capability offered to the model.
type Tool interface {
	Name() string
	Description() string
	// Parameters is a JSON Schema object describing the arguments.
	Parameters() json.RawMessage
	Flags() Flags
	// Run executes the tool. args were coerced and validated against
	// Parameters; failures go into the Result, not a Go error.
	Run(ctx context.Context, env Env, args map[string]any) Result
}

// RetrySafe is a side-effecting tool whose call, given its arguments, does
// its effect at most once per Env.Turn and Env.CallID: a retried attempt
// runs it again (and gets the answer) instead of reporting the outcome unknown.
type RetrySafe interface {
	RetrySafe(args map[string]any) bool
}

// Result is what the model sees of a tool call.
type Result struct {
	Text    string
	IsError bool
	// AnsweredOrigin: the tool sent a message to the chat the turn answers.
	AnsweredOrigin bool
}

// Env is the per-call context a tool runs in.
type Env struct {
	// Workspace is the absolute directory relative paths resolve against.
	Workspace string
	// RestrictToWorkspace refuses paths outside Workspace (tools.restrictToWorkspace).
	RestrictToWorkspace bool
	// Private are absolute, symlink-resolved paths no tool may touch even
	// unrestricted: the config file, its folder, nanobot's home (the
	// workspace inside them excepted).
	Private    []string
	SessionKey string
	CallID     string
	// Turn identifies the current user turn within the session, when the
	// caller knows it; per-turn guards (repeated web lookups) key on it and
	// fall back to a time window when it is empty.
	Turn string
	// Route is where the turn's message came from (the message tool's default target).
	Route protocol.Route
	// Policy is the turn's rule on tools: a call it refuses does not run.
	Policy Policy
	// Approved: a person approved this call, so the exec guard it tripped asked instead of refusing.
	Approved bool
}

// ErrorResult formats an error result; the text always starts with "Error: "
// because nanobot's prompts and hints key on that prefix.
func ErrorResult(format string, args ...any) Result {
	msg := fmt.Sprintf(format, args...)
	if !strings.HasPrefix(msg, "Error") {
		msg = "Error: " + msg
	}
	return Result{Text: msg, IsError: true}
}

// TextResult is a successful result.
func TextResult(text string) Result { return Result{Text: text} }

// StringArg returns args[key] as a string, or "" when absent.
func StringArg(args map[string]any, key string) string {
	switch v := args[key].(type) {
	case string:
		return v
	case nil:
		return ""
	case json.Number:
		return v.String()
	default:
		return fmt.Sprint(v)
	}
}

// IntArg returns args[key] as an int, or def when absent or not a number;
// out-of-range values are clamped.
func IntArg(args map[string]any, key string, def int) int {
	switch v := args[key].(type) {
	case int:
		return v
	case int64:
		return clampInt64(v)
	case float64:
		return clampInt(v)
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return clampInt64(n)
		}
		if f, err := strconv.ParseFloat(v.String(), 64); err == nil || math.IsInf(f, 0) {
			return clampInt(f)
		}
	}
	return def
}

// BoolArg returns args[key] as a bool, or def when absent or not a bool.
func BoolArg(args map[string]any, key string, def bool) bool {
	if v, ok := args[key].(bool); ok {
		return v
	}
	return def
}

func clampInt(f float64) int {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt:
		return math.MaxInt
	case f <= math.MinInt:
		return math.MinInt
	}
	return int(f)
}

func clampInt64(n int64) int {
	if n > math.MaxInt {
		return math.MaxInt
	}
	if n < math.MinInt {
		return math.MinInt
	}
	return int(n)
}
