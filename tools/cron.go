package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/cron"
)

// CronJobs keeps cron jobs; the durable layer implements it on Temporal Schedules.
type CronJobs interface {
	Add(ctx context.Context, job cron.Job) (cron.Job, error)
	List(ctx context.Context) ([]cron.Job, error)
	Remove(ctx context.Context, id string) (string, error)
}

// CronInCronText is nanobot's refusal of an add from a scheduled turn (the policy's).
const CronInCronText = "Error: cannot schedule new jobs from within a cron job execution"

const cronParameters = `{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["add", "list", "remove"], "description": "Action to perform"},
    "name": {"type": "string", "description": "Optional short human-readable label for the job (e.g., 'weather-monitor', 'daily-standup'). Defaults to first 30 chars of message."},
    "message": {"type": "string", "description": "Instruction for the agent to execute when the job triggers (e.g., 'Send a reminder: drink water' or 'Check system status and report')"},
    "every_seconds": {"type": "integer", "minimum": 0, "description": "Interval in seconds (for recurring tasks)"},
    "cron_expr": {"type": "string", "description": "Cron expression like '0 9 * * *' (for scheduled tasks)"},
    "tz": {"type": "string", "description": "Optional IANA timezone for cron expressions (e.g. 'America/Vancouver'). When omitted with cron_expr, the tool's default timezone applies."},
    "at": {"type": "string", "description": "ISO datetime for one-time execution (e.g. '2026-02-12T10:30:00'). Naive values use the tool's default timezone."},
    "job_id": {"type": "string", "description": "Job ID (for remove)"}
  },
  "required": ["action"]
}`

// CronTool is nanobot's cron tool: add, list and remove jobs whose
// reminders and tasks come back to this chat.
type CronTool struct {
	jobs CronJobs
	// tz is the default time zone (agents.defaults.timezone).
	tz string
}

// NewCronTool builds the cron tool; tz "" means UTC.
func NewCronTool(jobs CronJobs, tz string) *CronTool {
	if tz == "" || cron.ValidateTZ(tz) != nil {
		tz = "UTC"
	}
	return &CronTool{jobs: jobs, tz: tz}
}

func (t *CronTool) Name() string { return "cron" }
func (t *CronTool) Description() string {
	return "Schedule reminders and recurring tasks. Actions: add, list, remove. " +
		fmt.Sprintf("If tz is omitted, cron expressions and naive ISO times default to %s.", t.tz)
}
func (t *CronTool) Parameters() json.RawMessage { return json.RawMessage(cronParameters) }
func (t *CronTool) Flags() Flags                { return Flags{SideEffects: true} }

func (t *CronTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	switch action := StringArg(args, "action"); action {
	case "add":
		return t.add(ctx, env, args) // the turn's policy refuses an add from a scheduled turn
	case "list":
		jobs, err := t.jobs.List(ctx)
		if err != nil {
			return ErrorResult("Error: listing jobs: %v", err)
		}
		return TextResult(cron.FormatList(jobs, t.tz))
	case "remove":
		return t.remove(ctx, strings.TrimSpace(StringArg(args, "job_id")))
	default:
		return ErrorResult("Unknown action: %s", action)
	}
}

func (t *CronTool) add(ctx context.Context, env Env, args map[string]any) Result {
	message := StringArg(args, "message")
	if strings.TrimSpace(message) == "" {
		return ErrorResult("Error: message is required for add")
	}
	if env.Route.Channel == "" || env.Route.ChatID == "" {
		return ErrorResult("Error: no session context (channel/chat_id)")
	}
	expr, tz, at := strings.TrimSpace(StringArg(args, "cron_expr")), strings.TrimSpace(StringArg(args, "tz")), strings.TrimSpace(StringArg(args, "at"))
	if tz != "" && expr == "" && at == "" {
		return ErrorResult("Error: tz can only be used with cron_expr or at")
	}
	if tz != "" {
		if err := cron.ValidateTZ(tz); err != nil {
			return ErrorResult("Error: %v", err)
		}
	}
	job := cron.Job{
		ID: cron.IDFor(env.SessionKey, env.Turn, env.CallID), Name: strings.TrimSpace(StringArg(args, "name")),
		Message: message, SessionKey: env.SessionKey, Route: env.Route,
	}
	every := IntArg(args, "every_seconds", 0)
	switch {
	case every > 0:
		job.Every = time.Duration(every) * time.Second
	case expr != "":
		job.Expr, job.TZ = expr, tz
		if job.TZ == "" {
			job.TZ = t.tz
		}
	case at != "":
		if tz == "" {
			tz = t.tz
		}
		when, err := cron.ParseAt(at, tz)
		if err != nil {
			return ErrorResult("Error: %v", err)
		}
		job.At = when
	default:
		return ErrorResult("Error: either every_seconds, cron_expr, or at is required")
	}
	created, err := t.jobs.Add(ctx, job)
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	return TextResult(fmt.Sprintf("Created job '%s' (id: %s)", created.Name, created.ID))
}

func (t *CronTool) remove(ctx context.Context, id string) Result {
	if id == "" {
		return ErrorResult("Error: job_id is required for remove")
	}
	outcome, err := t.jobs.Remove(ctx, id)
	switch {
	case err != nil:
		return ErrorResult("Error: %v", err)
	case outcome == cron.Removed:
		return TextResult("Removed job " + id)
	case outcome == cron.Protected && id == "dream":
		return TextResult("Cannot remove job `dream`.\nThis is a system-managed Dream memory consolidation job for long-term memory.\n" +
			"It remains visible so you can inspect it, but it cannot be removed.")
	case outcome == cron.Protected:
		return TextResult(fmt.Sprintf("Cannot remove job `%s`.\nThis is a protected system-managed cron job.", id))
	}
	return TextResult(fmt.Sprintf("Job %s not found", id))
}
