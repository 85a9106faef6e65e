package activities

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/governance"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tokens"
	"github.com/nanobot-durable/nanobot/tools"
	"github.com/nanobot-durable/nanobot/usage"
)

// slashCommand is one built-in command handled without the model.
type slashCommand struct {
	name    string
	args    string // the hint /help shows after the name
	help    string
	hasArgs bool
	run     func(c *Commands, ctx context.Context, in protocol.StepInput, args string) (string, error)
	// answers, instead of run, is an approval command: it also reports that the asker got the answer.
	answers func(c *Commands, ctx context.Context, in protocol.StepInput, args string) (string, bool, error)
	// persist keeps the command and its reply in the session (as _command rows).
	persist bool
}

var commands []slashCommand

func init() {
	commands = []slashCommand{
		{name: "/new", help: "Reset this chat and start a fresh conversation.", run: (*Commands).cmdNew},
		{name: "/stop", help: "Cancel the active agent turn for this chat.", run: cmdStopIdle, persist: true},
		{name: "/restart", help: "Restart the bot process.", run: cmdRestartHere, persist: true},
		{name: "/status", help: "Display runtime, provider, and channel status.", run: (*Commands).cmdStatus, persist: true},
		{name: "/model", args: "[preset]", help: "Show or switch the active model preset.", hasArgs: true, run: (*Commands).cmdModel, persist: true},
		{name: "/history", args: "[n]", help: "Print the last N persisted conversation messages.", hasArgs: true, run: (*Commands).cmdHistory, persist: true},
		{name: "/goal", args: "<goal>", help: "Tell the agent to treat the request as a long-running goal.", hasArgs: true, run: cmdGoal, persist: true},
		{name: "/trigger", args: "<name>", help: "Create a named CLI trigger bound to this chat session.", hasArgs: true, run: (*Commands).cmdTrigger, persist: true},
		{name: "/dream", help: "Manually trigger memory consolidation.", run: (*Commands).cmdDream, persist: true},
		{name: "/dream-log", args: "[sha]", help: "Show what the last Dream consolidation changed.", hasArgs: true, run: (*Commands).cmdDreamLog, persist: true},
		{name: "/dream-restore", args: "<sha>", help: "Revert memory to a previous Dream snapshot.", hasArgs: true, run: (*Commands).cmdDreamRestore, persist: true},
		{name: "/dream-prompt", args: "[init]", help: "Tell Dream how to organize this workspace's memory.", hasArgs: true, run: (*Commands).cmdDreamPrompt, persist: true},
		{name: "/evaluator-prompt", args: "[init]", help: "Customize the heartbeat notification gate prompt for this workspace.", hasArgs: true, run: (*Commands).cmdEvaluatorPrompt, persist: true},
		{name: "/skill", help: "List all enabled skills available to the agent.", run: (*Commands).cmdSkill, persist: true},
		{name: "/help", help: "List available slash commands.", run: cmdHelp, persist: true},
		{name: "/pairing", args: "[list|approve <code>|deny <code>|revoke <user_id>]", help: "List, approve, deny or revoke pairing requests.", hasArgs: true, run: (*Commands).cmdPairing, persist: true},
		// Ours: a tool call that waits for a person (nanobot has no approvals).
		{name: protocol.ApproveCommand, args: "[id] [always|rule]", help: "Approve a tool call that waits.", hasArgs: true, answers: (*Commands).cmdApprove, persist: true},
		{name: protocol.DenyCommand, args: "[id] [reason]", help: "Refuse a tool call that waits.", hasArgs: true, answers: (*Commands).cmdDeny, persist: true},
		{name: protocol.ApprovalsCommand, args: "[clear]", help: "List what runs here without asking (clear forgets it).", hasArgs: true, run: (*Commands).cmdApprovals, persist: true},
	}
}

// Commands is the COMMAND state: nanobot's slash commands, answered
// without the model (and, for the read-only ones, while a turn runs).
type Commands struct {
	journal
	workspace string                // /dream-log
	archive   memory.Archive        // /new's raw archive
	pairing   *pairing.Store        // /pairing (nil: the config's home's file)
	prompts   *Prompts              // /skill
	usage     usage.Store           // /status
	config    func() *config.Config // /model, /pairing
	client    client.Client         // /dream, the approval signal
	owner     owner.Key             // who sent an approval command; the answer's proof
	exec      *tools.ExecSessions   // /stop and /new end the session's exec sessions
	log       *slog.Logger
}

// Command handles slash commands; anything else is dispatched to the model.
func (c *Commands) Command(ctx context.Context, in protocol.StepInput) (protocol.CommandResult, error) {
	name, args, ok := protocol.ParseCommand(in.Message.Content)
	if !ok {
		return protocol.CommandResult{}, nil
	}
	if name == "/goal" && args != "" {
		return protocol.CommandResult{Goal: true}, nil // a sustained goal: the model takes it
	}
	var cmd *slashCommand
	for i := range commands {
		if commands[i].name == name {
			cmd = &commands[i]
		}
	}
	var reply string
	persist, answered := true, false
	switch {
	case cmd == nil:
		reply = fmt.Sprintf("Unknown command %q.", name)
		if s := closestCommand(name); s != "" {
			reply = fmt.Sprintf("Unknown command %q. Did you mean %q?", name, s)
		}
	case args != "" && !cmd.hasArgs:
		reply = fmt.Sprintf("Command %q does not accept arguments. Did you mean %q?", cmd.name, cmd.name)
	default:
		var err error
		if cmd.answers != nil {
			reply, answered, err = cmd.answers(c, ctx, in, args)
		} else {
			reply, err = cmd.run(c, ctx, in, args)
		}
		if err != nil {
			return protocol.CommandResult{}, fmt.Errorf("command %s: %w", name, err)
		}
		persist = cmd.persist
	}
	if persist {
		now := time.Now().Format(session.TimeLayout)
		_, err := c.store.Append(ctx, in.SessionKey,
			chat.Message{Role: chat.RoleUser, Content: in.Message.Content, Command: true, Turn: in.Turn, EntryID: "user", Timestamp: now},
			chat.Message{Role: chat.RoleAssistant, Content: reply, Command: true, Turn: in.Turn, EntryID: "final", Timestamp: now})
		if err != nil {
			return protocol.CommandResult{}, fmt.Errorf("journal command %s: %w", name, err)
		}
	}
	res := protocol.CommandResult{Handled: true, Command: name, Reply: chat.Preview(reply, protocol.PreviewBytes), ApprovalAnswered: answered}
	if persist {
		res.EntryID = "final"
	}
	return res, nil
}

// closestCommand is the command a mistyped name most likely meant.
func closestCommand(name string) string {
	best, bestDist := "", 3
	for _, c := range commands {
		if d := tools.EditDistance([]byte(name), []byte(c.name)); d < bestDist {
			best, bestDist = c.name, d
		}
	}
	return best
}

// ArchiveFailedReply is nanobot's answer when /new could not archive.
const ArchiveFailedReply = "Memory archival failed, session not cleared."

// cmdNew clears the session once everything in it is archived. The
// workflow has the model summarize it first (a Consolidate activity); what
// is still unarchived here (that failed, or an older run) is archived raw.
// If even that fails, the session is kept.
func (c *Commands) cmdNew(ctx context.Context, in protocol.StepInput, _ string) (string, error) {
	c.endExecSessions(ctx, in.SessionKey)
	failed := false
	err := c.store.Update(ctx, in.SessionKey, func(s *session.Session) error {
		unarchived := s.Unarchived()
		if len(unarchived) > 0 {
			e := memory.Entry{Content: memory.RawArchive(unarchived), SessionKey: in.SessionKey, ID: in.Turn + "/new/raw"}
			if _, err := c.archive.Append(ctx, e); err != nil {
				c.log.Error("archiving before /new failed; the session is kept", "session", in.SessionKey, "error", err)
				failed = true
				return nil
			}
		}
		s.Messages = nil
		s.LastConsolidated = 0
		delete(s.Metadata, summaryKey)
		delete(s.Metadata, pendingKey)
		delete(s.Metadata, doneKey)
		forgetAllowed(s) // "always" holds for one conversation
		return nil
	})
	if err != nil {
		return "", err
	}
	if failed {
		return ArchiveFailedReply, nil
	}
	return "New session started.", nil
}

// cmdStopIdle answers /stop when no turn was running (a running turn is
// cancelled by the channel before the message gets here).
// Exec sessions the session left running are its tasks too, as in nanobot.
func cmdStopIdle(c *Commands, ctx context.Context, in protocol.StepInput, _ string) (string, error) {
	if n := c.endExecSessions(ctx, in.SessionKey); n > 0 {
		return fmt.Sprintf("Stopped %d task(s).", n), nil
	}
	return "No active task to stop.", nil
}

// endExecSessions ends the session's exec sessions; one that cannot be
// reached is logged, and its idle end still comes.
func (c *Commands) endExecSessions(ctx context.Context, sessionKey string) int {
	n, err := c.exec.EndOwned(ctx, sessionKey)
	if err != nil {
		c.log.Warn("ending the session's exec sessions failed", "session", sessionKey, "error", err)
	}
	return n
}

func cmdHelp(*Commands, context.Context, protocol.StepInput, string) (string, error) {
	var b strings.Builder
	b.WriteString("🐈 nanobot commands:") // nanobot's build_help_text
	for _, cmd := range commands {
		name := cmd.name
		if cmd.args != "" {
			name += " " + cmd.args
		}
		fmt.Fprintf(&b, "\n%s — %s", name, cmd.help)
	}
	return b.String(), nil
}

func (c *Commands) cmdStatus(ctx context.Context, in protocol.StepInput, _ string) (string, error) {
	sess, err := c.load(ctx, in.SessionKey)
	if err != nil {
		return "", err
	}
	count := tokens.For(in.Settings.Model)
	n := governance.HistoryTokens(sess, count.Message)
	prompt, completion := sessionUsage(sess)
	running := "none"
	if in.Running != "" {
		running = in.Running
	}
	goal := "none"
	if g := session.GoalOf(sess); g != nil {
		goal = fmt.Sprintf("%s (%s)", g.Label(), g.Status)
		if g.Reason != "" {
			goal += ": " + g.Reason
		}
	}
	return fmt.Sprintf("Model: %s\nSession: %s (%d messages, as /history lists them; %d journal entries with tool calls and commands)\nTokens used: %d in, %d out\nContext: %d of %d tokens (%s)\nRunning task: %s\nGoal: %s%s",
		in.Settings.Model, in.SessionKey, len(conversation(sess)), len(sess.Messages), prompt, completion, n, inputBudget(in.Settings), count.Encoding(), running, goal,
		c.usageToday(in.SessionKey)), nil
}

// usageToday is /status's view of the usage file: today's tokens by model
// and this session's (since midnight, local time).
func (c *Commands) usageToday(sessionKey string) string {
	if c.usage == nil {
		return ""
	}
	now := time.Now()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	recs, _, err := c.usage.Since(midnight)
	if err != nil {
		c.log.Warn("reading token usage failed", "error", err)
		return "\nUsage today: unavailable"
	}
	rep := usage.Summarize(recs, midnight, now.Location())
	if rep.Total.Calls == 0 {
		return "\nUsage today: none"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nUsage today: %s", usageLine(rep.Total))
	for _, r := range rep.ByDay {
		fmt.Fprintf(&b, "\n  %s: %s", r.Model, usageLine(r.Totals))
	}
	for _, r := range rep.Sessions {
		if r.Session == sessionKey {
			fmt.Fprintf(&b, "\n  this session: %s", usageLine(r.Totals))
		}
	}
	return b.String()
}

func usageLine(t usage.Totals) string {
	s := fmt.Sprintf("%d in, %d out", t.Prompt, t.Completion)
	if t.Cached > 0 {
		s += fmt.Sprintf(" (%d cached)", t.Cached)
	}
	return s + fmt.Sprintf(", %d call(s) in %d turn(s)", t.Calls, t.Turns)
}

// sessionUsage reads the token totals SAVE keeps in the session's metadata.
func sessionUsage(sess *session.Session) (prompt, completion int) {
	usage, _ := sess.Metadata["usage"].(map[string]any)
	p, _ := usage["prompt_tokens"].(float64)
	c, _ := usage["completion_tokens"].(float64)
	return int(p), int(c)
}

func (c *Commands) cmdHistory(ctx context.Context, in protocol.StepInput, args string) (string, error) {
	n := 10
	if args != "" {
		v, err := strconv.Atoi(args)
		if err != nil || v < 1 {
			return "Usage: /history [n] (n from 1 to 50)", nil
		}
		n = min(v, 50)
	}
	sess, err := c.load(ctx, in.SessionKey)
	if err != nil {
		return "", err
	}
	shown := conversation(sess)
	if len(shown) == 0 {
		return "No messages in this session yet.", nil
	}
	if len(shown) > n {
		shown = shown[len(shown)-n:]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Last %d message(s):", len(shown))
	for _, m := range shown {
		fmt.Fprintf(&b, "\n[%s] %s", m.Role, chat.Preview(m.Content, 300))
	}
	return b.String(), nil
}

// conversation is what the user and the agent said: user messages and
// assistant replies with text, without commands and tool traffic.
func conversation(sess *session.Session) []chat.Message {
	var out []chat.Message
	for _, m := range sess.Messages {
		if !m.Command && (m.Role == chat.RoleUser || (m.Role == chat.RoleAssistant && m.Content != "")) {
			out = append(out, m)
		}
	}
	return out
}

// cmdModel shows the session's model, or switches it to a modelPresets
// entry ("default" goes back to agents.defaults) from the next turn on.
func (c *Commands) cmdModel(ctx context.Context, in protocol.StepInput, args string) (string, error) {
	if c.config == nil {
		return "Model presets are not available in this worker.", nil
	}
	cfg := c.config()
	names := append(providers.PresetNames(cfg), providers.DefaultPresetName)
	if args == "" {
		sess, err := c.load(ctx, in.SessionKey)
		if err != nil {
			return "", err
		}
		current := sess.ModelPreset()
		if current == "" {
			current = providers.DefaultPresetName
		}
		return fmt.Sprintf("Current model: %s (preset %s)\nAvailable presets: %s", in.Settings.Model, current, strings.Join(names, ", ")), nil
	}
	p, ok := providers.PresetFor(cfg, args)
	if !ok {
		return fmt.Sprintf("Unknown model preset %q. Available presets: %s", args, strings.Join(names, ", ")), nil
	}
	err := c.store.Update(ctx, in.SessionKey, func(s *session.Session) error {
		if args == providers.DefaultPresetName {
			delete(s.Metadata, session.ModelPresetKey)
		} else {
			s.Metadata[session.ModelPresetKey] = args
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Switched to model preset %q (%s) for this session.", args, p.Model), nil
}

// listing is a command's answer: a header and one line per item, or empty
// when there is none.
func listing(header, empty string, lines []string) string {
	if len(lines) == 0 {
		return empty
	}
	return header + "\n" + strings.Join(lines, "\n")
}
