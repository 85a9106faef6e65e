package protocol

// TurnKind is what a turn is for. The host workflow fixes it, with the rest
// of the turn's Profile, once; the model call and the tool call read the
// same profile, so a tool offered is a tool the turn may run.
type TurnKind string

// The kinds of turns.
const (
	ChatTurn      TurnKind = ""          // a person's message (or a subagent's report to them)
	CronTurn      TurnKind = "cron"      // a cron job fired: it may not add jobs
	HeartbeatTurn TurnKind = "heartbeat" // the heartbeat's turn: no message tool
	DreamTurn     TurnKind = "dream"     // Dream tidies memory: file tools confined to DreamWritable
	SubagentTurn  TurnKind = "subagent"  // a spawned task: SubagentTools, confined to the workspace
	// TemporaryTurn is a web chat's temporary chat (nanobot's Temporary Chat):
	// a chat turn whose session stays out of lists, search and memory and is
	// deleted when the chat is discarded; no goals, subagents or cron jobs.
	TemporaryTurn TurnKind = "temporary"
)

// TemporaryDisabledTools are what a temporary chat may not use (nanobot's list).
var TemporaryDisabledTools = []string{"create_goal", "update_goal", "spawn", "cron"}

// RemembersIn reports whether turns of this kind archive into memory
// (Dream tidies memory itself; a temporary chat leaves nothing behind).
func (k TurnKind) RemembersIn() bool { return k != DreamTurn && k != TemporaryTurn }

// Scheduled reports whether turns of this kind come from a schedule.
func (k TurnKind) Scheduled() bool { return k == CronTurn || k == HeartbeatTurn }

// SessionKind is the kind of the session a turn of this kind keeps its
// journal in: a cron job's turn runs in its chat's session.
func (k TurnKind) SessionKind() TurnKind {
	if k == CronTurn {
		return ChatTurn
	}
	return k
}

// Name is how reports and logs name a kind.
func (k TurnKind) Name() string {
	if k == ChatTurn {
		return "chat"
	}
	return string(k)
}

// Profile is one turn's rules on tools.
type Profile struct {
	Kind TurnKind `json:"kind,omitempty"`
	// Tools are the tool names or path.Match patterns ("mcp_*") the turn may
	// use; nil allows every tool.
	Tools []string `json:"tools,omitempty"`
	// Goal: a /goal turn, where create_goal is offered and model calls have
	// no wall-clock limit.
	Goal bool `json:"goal,omitempty"`
	// Confined keeps every path inside the workspace, whatever
	// tools.restrictToWorkspace says.
	Confined bool `json:"confined,omitempty"`
	// Writable, when set, are the only workspace paths a tool may change
	// (slash paths; a trailing "/" names a folder).
	Writable []string `json:"writable,omitempty"`
}

// SubagentTools is what a subagent may use (nanobot's "subagent" scope):
// files, exec, search, the web and CLI apps; no message, spawn or cron.
var SubagentTools = []string{
	"read_file", "write_file", "edit_file", "list_dir", "apply_patch", "grep", "find_files",
	"exec", "web_search", "web_fetch", "run_cli_app",
}

// DreamTools are Dream's: read, and change the files of DreamWritable.
var DreamTools = []string{"read_file", "edit_file", "apply_patch", "write_file"}

// DreamWritable are the paths Dream may change.
var DreamWritable = []string{"skills/", "SOUL.md", "USER.md", "memory/MEMORY.md"}

// ProfileFor is the profile of a turn of this kind; goal marks a /goal turn.
func ProfileFor(kind TurnKind, goal bool) Profile {
	p := Profile{Kind: kind, Goal: goal}
	switch kind {
	case DreamTurn:
		p.Tools, p.Confined, p.Writable = DreamTools, true, DreamWritable
	case SubagentTurn:
		p.Tools, p.Confined = SubagentTools, true
	}
	return p
}
