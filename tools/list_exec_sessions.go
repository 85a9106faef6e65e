package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/tools/execsession"
)

const listExecSessionsDescription = "List active long-running exec sessions, including session_id, cwd, elapsed time, " +
	"idle time, remaining timeout, and command preview. Use this to recover a session_id after context shifts " +
	"before polling, writing stdin, or terminating with write_stdin."

// ListExecSessionsTool is list_exec_sessions: the calling session's exec
// sessions, those started before a worker restart included.
type ListExecSessionsTool struct{ sessions *ExecSessions }

// NewListExecSessions builds list_exec_sessions over the host's sessions.
func NewListExecSessions(s *ExecSessions) ListExecSessionsTool {
	return ListExecSessionsTool{sessions: s}
}

func (ListExecSessionsTool) Name() string        { return "list_exec_sessions" }
func (ListExecSessionsTool) Description() string { return listExecSessionsDescription }
func (ListExecSessionsTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type": "object", "properties": {}}`)
}
func (ListExecSessionsTool) Flags() Flags { return Flags{ReadOnly: true} }

func (t ListExecSessionsTool) Run(ctx context.Context, env Env, _ map[string]any) Result {
	sessions, err := execsession.List(ctx, t.sessions.Root)
	if err != nil {
		return ErrorResult("Error listing exec sessions: %v", err)
	}
	now := time.Now()
	var lines []string
	for _, s := range sessions {
		info := s.Info
		if info.Owner != env.SessionKey || info.Reported {
			continue
		}
		command := strings.Join(strings.Fields(info.Command), " ")
		if r := []rune(command); len(r) > 120 {
			command = string(r[:119]) + "..."
		}
		switch {
		case s.Ended != nil: // told once, then gone
			execsession.Forget(t.sessions.Root, s.ID)
			lines = append(lines, fmt.Sprintf("%s | ended: idle for %s (tools.exec.sessionIdleMinutes) | cwd=%s | %s",
				s.ID, minutes(s.Ended.After), info.Cwd, command))
			continue
		case s.Lost:
			execsession.Forget(t.sessions.Root, s.ID)
			lines = append(lines, fmt.Sprintf("%s | lost: its supervisor is gone | cwd=%s | %s", s.ID, info.Cwd, command))
			continue
		}
		status := "running"
		if !info.Running {
			status = "exited"
		}
		remaining := "inf" // no timeout, as nanobot prints an infinite deadline
		if !info.Deadline.IsZero() {
			remaining = fmt.Sprintf("%.1f", max(info.Deadline.Sub(now).Seconds(), 0))
		}
		lines = append(lines, fmt.Sprintf("%s | %s | elapsed=%.1fs | idle=%.1fs | remaining=%ss | cwd=%s | %s",
			s.ID, status, max(now.Sub(info.Started).Seconds(), 0), max(now.Sub(info.LastAccess).Seconds(), 0),
			remaining, info.Cwd, command))
	}
	if len(lines) == 0 {
		return TextResult("No active exec sessions.")
	}
	return TextResult(strings.Join(lines, "\n"))
}
