package channels

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/nanobot-durable/nanobot/providers"
)

// CLI is the terminal channel: it streams deltas of its session as they
// come and prints the delivered reply unless the stream already showed it.
type CLI struct {
	Out io.Writer
	// QuietErrors leaves error replies to the caller (one-shot mode prints
	// them as the command's failure instead).
	QuietErrors bool
	// ShowReasoning draws the model's reasoning, dimmed (--show-reasoning).
	ShowReasoning bool
	// Plain leaves out the ANSI codes that dim progress lines (output is not a terminal).
	Plain bool

	mu      sync.Mutex
	segment strings.Builder // what was drawn for the current model call
	drawn   bool            // something of the current reply is on screen
	ended   bool            // the segment's model call finished
	dim     bool            // reasoning is being drawn
	replies chan Reply
	lastID  string // the last reply shown: a retried delivery prints nothing
	// beforeReply runs before a reply is drawn (SetBeforeReply).
	beforeReply func(context.Context, Reply)
	// atLineStart: the cursor is at the start of a line (after a hint).
	atLineStart bool
}

// ANSI codes for drawing reasoning dimmed.
const (
	dimOn  = "\x1b[2m"
	dimOff = "\x1b[0m"
)

// CLIName is the terminal channel's name in routes and session keys.
const CLIName = "cli"

// The terminal is its user's own: no allow list, and replies go only to
// the process that runs it.
func init() {
	Register(Spec{Name: CLIName, PerProcess: true,
		Format: Format{Hint: "Your reply is shown in a terminal: plain text or light Markdown."}})
}

// NewCLI returns a CLI channel writing to out.
func NewCLI(out io.Writer) *CLI { return &CLI{Out: out, replies: make(chan Reply, 16)} }

// Name implements Channel.
func (c *CLI) Name() string { return CLIName }

// Draw shows one stream event; subscribe it to the hub for the CLI's session.
func (c *CLI) Draw(ev StreamEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.Reasoning != "" && c.ShowReasoning {
		if !c.dim {
			fmt.Fprint(c.Out, dimOn)
			c.dim = true
		}
		fmt.Fprint(c.Out, ev.Reasoning)
	}
	if ev.Delta == "" && !ev.End && !ev.Reset && ev.ToolHint == "" {
		return
	}
	if c.dim {
		fmt.Fprint(c.Out, dimOff)
		c.dim = false
	}
	if ev.ToolHint != "" {
		c.hint(ev.ToolHint)
		return
	}
	switch {
	case ev.Reset:
		if c.segment.Len() > 0 {
			fmt.Fprintln(c.Out, "\n[retrying…]")
		}
		c.segment.Reset()
	case ev.End:
		// A model call ended; a following call (after tools) starts a new segment.
		c.ended = c.segment.Len() > 0
	default:
		if c.ended {
			fmt.Fprintln(c.Out)
			c.segment.Reset()
			c.ended = false
		}
		c.drawn = true
		c.segment.WriteString(ev.Delta)
		fmt.Fprint(c.Out, ev.Delta)
		c.atLineStart = strings.HasSuffix(ev.Delta, "\n")
	}
}

// hint prints a tool's progress line on a line of its own, as nanobot's
// sendToolHints does ("↳ read_file README.md").
func (c *CLI) hint(text string) {
	if c.drawn && !c.atLineStart {
		fmt.Fprintln(c.Out)
	}
	if c.Plain {
		fmt.Fprintf(c.Out, "↳ %s\n", text)
	} else {
		fmt.Fprintf(c.Out, "%s↳ %s%s\n", dimOn, text, dimOff)
	}
	c.atLineStart = true
	c.segment.Reset()
	c.ended = false
}

// Hint draws a progress line that arrived by another way than the hub (a
// thin client polls the turn for them).
func (c *CLI) Hint(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hint(text)
}

// SetBeforeReply makes f run before each reply is drawn, outside the
// channel's lock: a thin client draws there the tool lines it has not
// polled yet, so no hint of a turn lands after the answer that follows it.
func (c *CLI) SetBeforeReply(f func(context.Context, Reply)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.beforeReply = f
}

// Send implements Channel: print the reply unless the stream already
// showed exactly that text; a retried delivery of the same turn prints nothing.
func (c *CLI) Send(ctx context.Context, r Reply) error {
	c.mu.Lock()
	before := c.beforeReply
	c.mu.Unlock()
	if before != nil {
		before(ctx, r)
	}
	c.mu.Lock()
	key := r.Key()
	if (key == "" || key != c.lastID) && !(c.QuietErrors && r.StopReason == "error") {
		shown := strings.TrimSpace(providers.StripThink(c.segment.String()))
		if shown != "" && shown == strings.TrimSpace(r.Text) {
			fmt.Fprintln(c.Out)
		} else {
			if c.drawn {
				fmt.Fprintln(c.Out)
			}
			fmt.Fprintln(c.Out, r.Text)
		}
		c.lastID = key
	}
	c.segment.Reset()
	c.drawn, c.ended = false, false
	c.mu.Unlock()
	select {
	case c.replies <- r:
	default:
	}
	return nil
}

// Replies yields every delivered reply.
func (c *CLI) Replies() <-chan Reply { return c.replies }

// Start implements Channel: the terminal reads its input in the agent command.
func (c *CLI) Start(context.Context, Publish) error { return nil }

// Stop implements Channel.
func (c *CLI) Stop(context.Context) error { return nil }

// IsAllowed implements Channel: whoever runs the terminal owns the agent.
func (c *CLI) IsAllowed(string) bool { return true }

// EndTurn closes a streamed line that no delivered reply closed (the
// message tool stood in for the final reply).
func (c *CLI) EndTurn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drawn {
		fmt.Fprintln(c.Out)
	}
	c.segment.Reset()
	c.drawn, c.ended = false, false
}
