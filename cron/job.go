// Package cron keeps nanobot's cron jobs as Temporal Schedules: one
// schedule cron/<job id> per job, whose action starts a scheduled turn in
// the job's session. Jobs live in Temporal only; listing reads them back.
package cron

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	robfig "github.com/robfig/cron/v3"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Job is one cron job: what it says, where, and when.
type Job struct {
	ID      string
	Name    string
	Message string
	// SessionKey is the session the job's turns run in; Route where their replies go.
	SessionKey string
	Route      protocol.Route
	// One of Every, Expr (with TZ) and At.
	Every time.Duration
	Expr  string
	TZ    string
	At    time.Time

	// Read back from Temporal.
	Next   []time.Time
	Paused bool
	// Protected jobs are system schedules (dream, heartbeat): listed, never removed.
	Protected bool
	Purpose   string
}

// Kind is nanobot's schedule kind: "at", "every" or "cron".
func (j Job) Kind() string {
	switch {
	case !j.At.IsZero():
		return "at"
	case j.Expr != "":
		return "cron"
	}
	return "every"
}

// minEvery is the shortest interval a job may have (Temporal's minimum).
const minEvery = time.Second

// parser reads standard five-field expressions (and @hourly, @daily, …),
// as Temporal's schedule spec does.
var parser = robfig.NewParser(robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month | robfig.Dow | robfig.Descriptor)

// Validate checks a new job before any schedule exists: a bad expression,
// time zone or time gets a clear error and creates nothing.
func (j Job) Validate(now time.Time) error {
	set := 0
	for _, on := range []bool{j.Every != 0, j.Expr != "", !j.At.IsZero()} {
		if on {
			set++
		}
	}
	switch {
	case strings.TrimSpace(j.Message) == "":
		return errors.New("message is required for add")
	case set == 0:
		return errors.New("either every_seconds, cron_expr, or at is required")
	case set > 1:
		return errors.New("give only one of every_seconds, cron_expr and at")
	case j.Every != 0 && j.Every < minEvery:
		return fmt.Errorf("every_seconds must be at least %d", int(minEvery.Seconds()))
	case !j.At.IsZero() && !j.At.After(now):
		return fmt.Errorf("at %s is in the past", j.At.Format(time.RFC3339))
	}
	if j.Expr != "" {
		if _, err := parser.Parse(j.Expr); err != nil {
			return fmt.Errorf("invalid cron expression '%s': %v", j.Expr, err)
		}
	}
	if j.TZ != "" {
		if err := ValidateTZ(j.TZ); err != nil {
			return err
		}
	}
	return nil
}

// ValidateTZ checks an IANA time zone name.
func ValidateTZ(tz string) error {
	if _, err := time.LoadLocation(tz); err != nil || tz == "" || strings.EqualFold(tz, "local") {
		return fmt.Errorf("unknown timezone '%s'", tz)
	}
	return nil
}

// atLayouts are the ISO forms an "at" time may take (Python's fromisoformat).
var atLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04",
	"2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05Z07:00", "2006-01-02",
}

// ParseAt reads an ISO datetime; a value without an offset is in tz.
func ParseAt(s, tz string) (time.Time, error) {
	loc := time.UTC
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return time.Time{}, fmt.Errorf("unknown timezone '%s'", tz)
		}
		loc = l
	}
	s = strings.TrimSpace(s)
	for _, layout := range atLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid ISO datetime format '%s'. Expected format: YYYY-MM-DDTHH:MM:SS", s)
}

// NewID is a fresh job ID: 8 hex digits, as nanobot's.
func NewID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// IDFor derives a job ID from what created it (a tool call), so a retried
// add finds the job it already made instead of making a second.
func IDFor(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:4])
}

// DefaultName is nanobot's name for an unnamed job: the message's first 30 characters.
func DefaultName(message string) string {
	r := []rune(strings.TrimSpace(message))
	if len(r) > 30 {
		r = r[:30]
	}
	return string(r)
}

// Timing says when a job runs, in nanobot's words ("every 5s", "cron: 0 9 * * * (UTC)").
func (j Job) Timing(tz string) string {
	switch j.Kind() {
	case "cron":
		if j.TZ != "" {
			return fmt.Sprintf("cron: %s (%s)", j.Expr, j.TZ)
		}
		return "cron: " + j.Expr
	case "at":
		return "at " + FormatTime(j.At, tz)
	}
	ms := j.Every.Milliseconds()
	switch {
	case ms > 0 && ms%3_600_000 == 0:
		return fmt.Sprintf("every %dh", ms/3_600_000)
	case ms > 0 && ms%60_000 == 0:
		return fmt.Sprintf("every %dm", ms/60_000)
	case ms > 0 && ms%1000 == 0:
		return fmt.Sprintf("every %ds", ms/1000)
	}
	return fmt.Sprintf("every %dms", ms)
}

// FormatTime shows an instant in a time zone, with the zone's name.
func FormatTime(t time.Time, tz string) string {
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "" {
		loc, tz = time.UTC, "UTC"
	}
	return fmt.Sprintf("%s (%s)", t.In(loc).Format(time.RFC3339), tz)
}

// FormatList is the cron tool's list text (nanobot's), with next run times from Temporal.
func FormatList(jobs []Job, tz string) string {
	if len(jobs) == 0 {
		return "No scheduled jobs."
	}
	lines := []string{"Scheduled jobs:"}
	for _, j := range jobs {
		show := tz
		if j.TZ != "" {
			show = j.TZ
		}
		lines = append(lines, fmt.Sprintf("- %s (id: %s, %s)", j.Name, j.ID, j.Timing(show)))
		if j.Protected {
			lines = append(lines, "  Purpose: "+j.Purpose, "  Protected: visible for inspection, but cannot be removed.")
		}
		if j.Paused {
			lines = append(lines, "  Paused (in Temporal).")
		}
		if len(j.Next) > 0 {
			lines = append(lines, "  Next run: "+FormatTime(j.Next[0], show))
		}
	}
	return strings.Join(lines, "\n")
}

// Prompt is what a fired job says in its session: the model carries out
// the instruction and its answer goes to the chat the job came from.
func Prompt(name, message string) string {
	return fmt.Sprintf("[Scheduled task] The cron job '%s' fired.\nInstruction: %s\n\n"+
		"Carry out the instruction now. Your answer is sent to the user as it is: "+
		"for a reminder, write the reminder itself.", name, message)
}
