package inspect

import (
	"cmp"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Options shape the text view.
type Options struct {
	// UIURL is the Temporal Web UI's base URL ("" prints no link).
	UIURL     string
	Namespace string
	// Location for times (nil: UTC).
	Location *time.Location
	// PreviewChars bounds each preview line.
	PreviewChars int
}

// Link is the Web UI page of one run.
func Link(base, namespace, workflowID, runID string) string {
	if base == "" {
		return ""
	}
	return fmt.Sprintf("%s/namespaces/%s/workflows/%s/%s/history", strings.TrimRight(base, "/"),
		url.PathEscape(namespace), url.PathEscape(workflowID), url.PathEscape(runID))
}

// Render writes the turn state by state, iteration by iteration.
func Render(w io.Writer, t *Turn, o Options) error {
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	n := o.PreviewChars
	if n <= 0 {
		n = 100
	}
	p := &printer{w: w}
	p.f("Turn:     %s (run %s)\n", t.WorkflowID, t.RunID)
	status := t.Status
	if !t.Closed.IsZero() {
		status += " after " + dur(t.Closed.Sub(t.Started))
	} else if t.Current != "" {
		status += ", now in " + t.Current
	}
	if t.Resumed {
		status += " (continues an earlier run of this turn)"
	}
	p.f("Status:   %s\n", status)
	p.f("Started:  %s\n", t.Started.In(loc).Format("2006-01-02 15:04:05.000 MST"))
	if link := Link(o.UIURL, o.Namespace, t.WorkflowID, t.RunID); link != "" {
		p.f("Web UI:   %s\n", link)
	}
	for _, m := range t.Messages {
		p.f("Message:  %s\n", line(m, n))
	}
	for _, a := range t.Approvals {
		why := ""
		if a.Reason != "" {
			why = " — " + line(a.Reason, n)
		}
		p.f("Approval: %s %s by %s at %s%s\n", a.ID, a.Verdict, cmp.Or(a.By, "?"), a.At.In(loc).Format("15:04:05"), why)
	}
	if len(t.States) > 0 {
		p.f("\nStates:\n")
		for _, s := range t.States {
			ev := s.Event
			if s.Error != "" {
				ev += " — " + line(s.Error, n)
			}
			p.f("  %-8s %8s  %s\n", s.State, dur(time.Duration(s.DurationMS)*time.Millisecond), ev)
		}
	}
	if len(t.Iterations) > 0 {
		p.f("\nIterations:\n")
	}
	for _, it := range t.Iterations {
		head := fmt.Sprintf("  #%d llm %s", it.N, it.Model)
		if it.Mode != "" {
			head += " (" + it.Mode + ")"
		}
		switch {
		case it.Pending:
			p.f("%s  running\n", head)
		case it.Error != "":
			p.f("%s %s  failed: %s\n", head, dur(it.Duration), line(it.Error, n))
		default:
			p.f("%s %s → %s, %s%s\n", head, dur(it.Duration), outcome(it), tokens(it.Prompt, it.Completion, it.Cached), retries(it.Attempts))
			if it.Preview != "" {
				p.f("      %q\n", line(it.Preview, n))
			}
		}
		for _, tl := range it.Tools {
			p.f("    tool %s %s  %s %s\n", tl.Name, line(tl.Args, n/2), dur(tl.Duration), tl.Outcome)
			if tl.Preview != "" {
				p.f("      %q\n", line(tl.Preview, n))
			}
		}
	}
	p.f("\nTokens:   %s\n", tokens(t.Prompt, t.Completion, t.Cached))
	if t.Reply != "" || t.StopReason != "" {
		p.f("Reply:    %q (%s)\n", line(t.Reply, n), t.StopReason)
	}
	if t.Error != "" {
		p.f("Error:    %s\n", line(t.Error, n))
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func outcome(it Iteration) string {
	calls := len(it.Tools)
	if calls > 0 {
		s := "s"
		if calls == 1 {
			s = ""
		}
		return fmt.Sprintf("%d tool call%s (%s)", calls, s, it.Finish)
	}
	return "answer (" + it.Finish + ")"
}

func tokens(prompt, completion, cached int) string {
	s := fmt.Sprintf("%s in / %s out", protocol.CompactTokens(prompt), protocol.CompactTokens(completion))
	if cached > 0 {
		s += fmt.Sprintf(" (%s cached)", protocol.CompactTokens(cached))
	}
	return s + " tokens"
}

func retries(attempts int32) string {
	if attempts > 1 {
		return fmt.Sprintf(", attempt %d", attempts)
	}
	return ""
}

func line(s string, n int) string {
	return chat.Preview(strings.Join(strings.Fields(s), " "), n)
}

func dur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}
