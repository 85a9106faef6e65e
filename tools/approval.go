package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// defaultRiskyCommands are the exec commands "risky" asks about when
// tools.approval.commands is empty (matched against the lower-cased command).
var defaultRiskyCommands = []string{
	`\bgit\s+push\b`,
	`\bgit\s+reset\s+--hard\b`,
	`\bsudo\b`,
	`\b(?:curl|wget)\b[^|]*\|\s*(?:ba|z)?sh\b`,
	`\bch(?:mod|own)\s+-r`,
	`\b(?:kill|pkill|killall)\b`,
	`\b(?:npm|cargo|twine)\s+publish\b`,
}

// Approval is tools.approval, compiled: which calls wait for a person's yes.
// It is the third verdict of the turn's policy, beside "run" and "refuse".
type Approval struct {
	mode     string
	tools    []string
	commands []*regexp.Regexp
}

// NewApproval compiles tools.approval (checked at config load).
func NewApproval(cfg config.Approval) (*Approval, error) {
	a := &Approval{mode: cfg.Mode, tools: cfg.Tools}
	patterns := cfg.Commands
	if len(patterns) == 0 {
		patterns = defaultRiskyCommands
	}
	for i, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("tools.approval.commands[%d]: %q: %w", i, p, err)
		}
		a.commands = append(a.commands, re)
	}
	return a, nil
}

// Asks reports whether any call may wait for a person.
func (a *Approval) Asks() bool { return a != nil && (a.mode == "risky" || a.mode == "all") }

// Ask is the policy's third verdict on a call: nil to decide as before
// (run, or refuse), or why a person must approve it first and what
// "always" would cover. The heartbeat and Dream never ask.
func (r *Registry) Ask(ctx context.Context, a *Approval, env Env, name, argsJSON string) *protocol.AskRef {
	ask := r.ask(ctx, a, env, name, argsJSON)
	if ask != nil {
		_, v := KeyArg(argsJSON)
		ask.Args = chat.Preview(strings.Join(strings.Fields(v), " "), 300)
	}
	return ask
}

func (r *Registry) ask(ctx context.Context, a *Approval, env Env, name, argsJSON string) *protocol.AskRef {
	kind := env.Policy.profile.Kind
	if !a.Asks() || kind == protocol.HeartbeatTurn || kind == protocol.DreamTurn {
		return nil
	}
	tool, ok := r.Get(name)
	if !ok || env.Policy.permitName(name) != nil {
		return nil // refused, not asked
	}
	var args map[string]any
	_ = json.Unmarshal([]byte(argsJSON), &args)
	exec, isExec := tool.(*ExecTool)
	command, refused := StringArg(args, "command"), ""
	if isExec {
		refused = exec.guard.check(ctx, command)
	}
	reason := askReason(a, env, tool, name, args, refused)
	if reason == "" {
		return nil
	}
	// A command the guard refuses is asked every time: never always, no rule.
	ask := &protocol.AskRef{Reason: reason, Key: exactKey(name, args, argsJSON), Once: refused != ""}
	if isExec && !ask.Once {
		ask.Rule = commandRule(command)
	}
	return ask
}

// askReason is why a person must approve the call first, "" when nobody
// needs to; refused is the exec guard's verdict on an exec command.
func askReason(a *Approval, env Env, tool Tool, name string, args map[string]any, refused string) string {
	if refused != "" {
		return "the exec guard would refuse it: " + refused
	}
	for _, g := range a.tools {
		if ok, _ := path.Match(g, name); ok {
			return fmt.Sprintf("%s asks first (tools.approval.tools: %s)", name, g)
		}
	}
	if _, ok := tool.(*ExecTool); ok {
		lower := strings.ToLower(StringArg(args, "command"))
		for _, re := range a.commands {
			if re.MatchString(lower) {
				return "a risky command (" + re.String() + ")"
			}
		}
	}
	if !env.RestrictToWorkspace && slices.Contains(writesFiles, name) {
		for _, target := range writtenPaths(args) {
			if outsideWorkspace(env, target) {
				return fmt.Sprintf("%s writes outside the workspace: %s", name, target)
			}
		}
	}
	if a.mode == "all" && tool.Flags().SideEffects {
		return name + " changes things (tools.approval.mode: all)"
	}
	return ""
}

// outsideWorkspace reports whether target resolves outside the workspace.
func outsideWorkspace(env Env, target string) bool {
	confined := env
	confined.RestrictToWorkspace = true
	_, err := ResolvePath(confined, target)
	return err != nil
}
