package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nanobot-durable/nanobot/tools/execsession"
)

const writeStdinDescription = "Interact with a running exec session created by exec with yield_time_ms. Use chars='' " +
	"to poll without writing, chars to send stdin, close_stdin=true to send EOF, or terminate=true to stop the " +
	"process. Use wait_for with wait_timeout_ms for dev servers, test watchers, and prompts where you need to wait " +
	"for expected output. Do not use this to start new commands; start them with exec."

const writeStdinParameters = `{
  "type": "object",
  "properties": {
    "session_id": {"type": "string", "description": "Session id returned by exec when yield_time_ms is used."},
    "chars": {"type": ["string", "null"], "description": "Bytes/text to write to stdin. Omit or pass an empty string to only poll recent output."},
    "close_stdin": {"type": "boolean", "default": false, "description": "Close stdin after writing chars. Useful for commands waiting for EOF."},
    "terminate": {"type": "boolean", "default": false, "description": "Terminate the running exec session."},
    "yield_time_ms": {"type": "integer", "minimum": 0, "maximum": 30000, "description": "Milliseconds to wait before returning recent output (default 1000, max 30000)."},
    "wait_for": {"type": ["string", "null"], "description": "Optional text to wait for in output before returning. Useful for interactive commands and dev servers."},
    "wait_timeout_ms": {"type": ["integer", "null"], "minimum": 0, "maximum": 120000, "description": "Maximum milliseconds to wait for wait_for text (default 10000, max 120000)."},
    "max_output_chars": {"type": "integer", "minimum": 1000, "maximum": 50000, "description": "Maximum output characters to return from this poll (default 10000, max 50000)."},
    "max_output_tokens": {"type": ["integer", "null"], "minimum": 1000, "maximum": 50000, "description": "Compatibility alias for max_output_chars. The current runtime uses a character budget."}
  },
  "required": ["session_id"]
}`

// WriteStdinTool is write_stdin: it writes to, polls or ends an exec
// session. Each call's effect happens once per call ID: a retried attempt
// reads the output again without writing again.
type WriteStdinTool struct {
	sessions *ExecSessions
	guard    *commandGuard // exec's deny patterns, also for what is typed into a shell
}

// NewWriteStdin builds write_stdin over the host's sessions; what it types
// is held to ex's deny patterns (ex nil: none).
func NewWriteStdin(s *ExecSessions, ex *ExecTool) WriteStdinTool {
	t := WriteStdinTool{sessions: s}
	if ex != nil {
		t.guard = ex.guard
	}
	return t
}

func (WriteStdinTool) Name() string                { return "write_stdin" }
func (WriteStdinTool) Description() string         { return writeStdinDescription }
func (WriteStdinTool) Parameters() json.RawMessage { return json.RawMessage(writeStdinParameters) }
func (WriteStdinTool) Flags() Flags                { return Flags{Exclusive: true, SideEffects: true} }

// RetrySafe: the supervisor dedupes each call's write by its key.
func (WriteStdinTool) RetrySafe(map[string]any) bool { return true }

func (t WriteStdinTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	id := StringArg(args, "session_id")
	if chars := StringArg(args, "chars"); t.guard != nil && chars != "" && !env.Approved {
		if reason := t.guard.dangerous(chars); reason != "" {
			return ErrorResult("Error: Input blocked by safety guard (%s)", reason)
		}
	}
	limit := outputLimit(args)
	req := execsession.Request{
		Op: execsession.OpPoll, Key: callKey(env), Owner: env.SessionKey,
		Chars: StringArg(args, "chars"), CloseStdin: BoolArg(args, "close_stdin", false),
		Terminate: BoolArg(args, "terminate", false),
		Yield:     time.Duration(clampArg(args, "yield_time_ms", execSessionDefaultYield, 0, execSessionMaxYield)) * time.Millisecond,
	}
	if waitFor := StringArg(args, "wait_for"); waitFor != "" {
		req.WaitFor = waitFor
		req.WaitTimeout = time.Duration(clampArg(args, "wait_timeout_ms", execSessionDefaultWait, 0, execSessionMaxWait)) * time.Millisecond
	}
	rep, err := execsession.Call(ctx, t.sessions.Root, id, req)
	switch {
	case errors.Is(err, execsession.ErrNotFound):
		if ended, ok := execsession.ReadEnded(t.sessions.Root, id); ok && ended.Owner == env.SessionKey {
			execsession.Forget(t.sessions.Root, id) // told once
			return ErrorResult("Error: %s", endedNote(ended))
		}
		return ErrorResult("Error: exec session not found: %s", pyRepr(id))
	case err != nil:
		return ErrorResult("Error writing to exec session: %v", err)
	case rep.Error != "":
		return ErrorResult("Error writing to exec session: %s", rep.Error)
	}
	res := sessionResult(id, rep, limit)
	if req.WaitFor != "" && !rep.WaitSeen {
		res.Text += fmt.Sprintf("\nWait target not observed: %s", pyRepr(req.WaitFor))
	}
	return res
}
