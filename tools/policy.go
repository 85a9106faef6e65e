package tools

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Policy is one turn's rule on tools, read from its profile: which
// definitions the model is offered (Offer) and whether a call may run
// (Permit). The model call and the tool call build it from the same
// profile, so a tool offered is a tool the turn may run.
type Policy struct {
	profile protocol.Profile
	// goalActive: the session has an active goal, so update_goal is offered.
	goalActive bool
	// workspace resolves the paths a Writable profile allows.
	workspace string
}

// NewPolicy is the policy of a turn with this profile in this workspace.
func NewPolicy(p protocol.Profile, workspace string) Policy {
	return Policy{profile: p, workspace: workspace}
}

// WithActiveGoal says whether the session has an active goal.
func (p Policy) WithActiveGoal(active bool) Policy { p.goalActive = active; return p }

// Confined reports whether every path must stay inside the workspace.
func (p Policy) Confined() bool { return p.profile.Confined || len(p.profile.Writable) > 0 }

// Refusal is a call the policy does not let run; its text is the tool's
// result for the model. (Human approval adds a third verdict beside
// "run it" (nil) and this one.)
type Refusal struct{ Text string }

func (r *Refusal) Error() string { return r.Text }

func refuse(format string, args ...any) *Refusal {
	return &Refusal{Text: ErrorResult(format, args...).Text}
}

// Texts of the refusals the model sees.
const (
	heartbeatMessageText = "Error: the message tool is not available during a heartbeat run"
	heartbeatSessionText = "Error: send_session_message is not available during a heartbeat run"
	createGoalText       = "Error: create_goal is only available after the user sets a goal with /goal"
)

// writesFiles are the tools whose path arguments name what they change.
var writesFiles = []string{"write_file", "edit_file", "apply_patch"}

// Offer keeps the definitions this turn may call, in their order.
func (p Policy) Offer(defs []chat.ToolDefinition) []chat.ToolDefinition {
	out := make([]chat.ToolDefinition, 0, len(defs))
	for _, d := range defs {
		if p.permitName(d.Name) != nil {
			continue
		}
		if d.Name == "update_goal" && !p.profile.Goal && !p.goalActive {
			continue // nothing to end or change
		}
		out = append(out, d)
	}
	return out
}

// Permit decides whether a call may run: nil, or a *Refusal whose text is
// the result for the model. args are the call's parsed arguments.
func (p Policy) Permit(name string, args map[string]any) error {
	if r := p.permitName(name); r != nil {
		return r
	}
	if p.profile.Kind.Scheduled() && name == "cron" && StringArg(args, "action") == "add" {
		return &Refusal{Text: CronInCronText}
	}
	if len(p.profile.Writable) > 0 && slices.Contains(writesFiles, name) {
		for _, target := range writtenPaths(args) {
			if !p.writable(target) {
				return refuse("Error: %s may only change %s; %q is not one of them", name, strings.Join(p.profile.Writable, ", "), target)
			}
		}
	}
	return nil
}

// permitName holds the rules that depend on the tool's name alone.
func (p Policy) permitName(name string) *Refusal {
	switch {
	case !p.allowed(name):
		return refuse("Error: Tool '%s' is not available here (allowed: %s)", name, strings.Join(p.profile.Tools, ", "))
	case name == "message" && p.profile.Kind == protocol.HeartbeatTurn:
		return &Refusal{Text: heartbeatMessageText} // nanobot withholds it while the heartbeat runs
	case name == "send_session_message" && p.profile.Kind == protocol.HeartbeatTurn:
		return &Refusal{Text: heartbeatSessionText} // the heartbeat tells people nothing but through its decision
	case p.profile.Kind == protocol.TemporaryTurn && slices.Contains(protocol.TemporaryDisabledTools, name):
		return refuse("Error: Tool '%s' is not available in a temporary chat", name)
	case name == "create_goal" && !p.profile.Goal:
		return &Refusal{Text: createGoalText}
	}
	return nil
}

func (p Policy) allowed(name string) bool {
	if p.profile.Tools == nil {
		return true
	}
	for _, pattern := range p.profile.Tools {
		if ok, _ := path.Match(pattern, name); ok {
			return true
		}
	}
	return false
}

// writtenPaths are the paths a file-writing call names: path, or each
// edits[].path of apply_patch.
func writtenPaths(args map[string]any) []string {
	if edits, ok := args["edits"].([]any); ok {
		var out []string
		for _, e := range edits {
			if m, ok := e.(map[string]any); ok {
				out = append(out, StringArg(m, "path"))
			}
		}
		return out
	}
	return []string{StringArg(args, "path")}
}

// writable resolves p (symlinks too) and checks it against the profile's paths.
func (p Policy) writable(target string) bool {
	env := Env{Workspace: p.workspace, RestrictToWorkspace: true}
	resolved, errRes := resolveForTool(env, target)
	if errRes != nil {
		return false
	}
	ws, err := workspaceDir(env)
	if err == nil {
		ws, err = resolveSymlinks(ws)
	}
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(ws, resolved)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	for _, a := range p.profile.Writable {
		if rel == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(rel, a)) {
			return true
		}
	}
	return false
}
