package protocol

// Memory upkeep: consolidation into memory/history.jsonl, idle compaction
// and Dream. Payloads carry counts and previews; the summaries stay in the
// files.
const (
	// ActivityConsolidate archives old messages of a session (a model call: LLM queue).
	ActivityConsolidate = "Consolidate"
	// ActivityIdleSessions lists sessions idle long enough to compact.
	ActivityIdleSessions = "IdleSessions"
	// ActivityPrepareDream picks the history entries a Dream run absorbs.
	ActivityPrepareDream = "PrepareDream"
	// ActivityFinishDream moves the Dream cursor and commits the memory files.
	ActivityFinishDream = "FinishDream"
	// ActivityMeasure counts the session's next prompt (after SAVE).
	ActivityMeasure = "Measure"

	IdleCompactWorkflowName = "IdleCompactWorkflow"
	DreamWorkflowName       = "DreamWorkflow"

	// MaxConsolidationRounds bounds one consolidation (nanobot's 5).
	MaxConsolidationRounds = 5
	// IdleKeepMessages is how many messages idle compaction leaves (nanobot's 8).
	IdleKeepMessages = 8
)

// Why a consolidation runs.
const (
	ConsolidateBudget    = "budget"     // the prompt reached the input budget before the turn
	ConsolidateAfterSave = "after_save" // the saved turn left the next prompt over budget
	ConsolidateNew       = "new"        // /new archives everything before clearing
	ConsolidateIdle      = "idle"       // the session was idle: keep the last 8 messages
)

// ConsolidateInput asks for one round of consolidation.
type ConsolidateInput struct {
	SessionKey string   `json:"session_key"`
	Turn       string   `json:"turn"` // the run that asks; with Reason and Round it names the archive entry
	Reason     string   `json:"reason"`
	Round      int      `json:"round"`
	Settings   Settings `json:"settings"`
	// Target is the prompt size to get under (budget reasons).
	Target int `json:"target,omitempty"`
}

// ConsolidateResult tells what one round archived.
type ConsolidateResult struct {
	Archived int  `json:"archived"`         // messages archived by this round
	Cursor   int  `json:"cursor,omitempty"` // the history entry written (0: none)
	Raw      bool `json:"raw,omitempty"`    // the model failed: the messages were archived raw
	Nothing  bool `json:"nothing,omitempty"`
	// PromptTokens is the session's prompt size after the round.
	PromptTokens   int    `json:"prompt_tokens"`
	SummaryPreview string `json:"summary_preview,omitempty"`
}

// MeasureResult tells how big the next prompt of the session will be.
type MeasureResult struct {
	PromptTokens int `json:"prompt_tokens"`
	Budget       int `json:"budget"`
}

// IdleCompactInput is the idle-compact schedule's action: nothing, the
// firing reads its settings from the config of its time (IdleSessions).
type IdleCompactInput struct{}

// IdleSessions are the sessions idle longer than
// agents.defaults.idleCompactAfterMinutes, and the settings to compact them with.
type IdleSessions struct {
	Sessions []string `json:"sessions"`
	Skipped  []string `json:"skipped,omitempty"` // a turn was running
	Settings Settings `json:"settings"`
}

// IdleCompactResult tells what one idle-compact run did.
type IdleCompactResult struct {
	Compacted []string `json:"compacted"`
	Skipped   []string `json:"skipped,omitempty"` // a turn was running
}

// DreamInput is the dream schedule's action (and /dream's); the run reads
// its settings from the config of its time (PrepareDream).
type DreamInput struct {
	// Route, when set, gets the result (a /dream in that chat).
	Route *Route `json:"route,omitempty"`
}

// DreamPlan is what PrepareDream picked.
type DreamPlan struct {
	SessionKey string `json:"session_key"` // dream:YYYYmmdd-HHMMSS
	From       int    `json:"from"`        // the cursor before the run
	To         int    `json:"to"`          // the last entry the run absorbs
	Entries    int    `json:"entries"`
	// Settings are the Dream turn's: agents.defaults.dream.modelOverride applies.
	Settings Settings `json:"settings"`
}

// FinishDreamInput closes a Dream run.
type FinishDreamInput struct {
	Plan      DreamPlan `json:"plan"`
	Completed bool      `json:"completed"` // only a completed run moves the cursor
	Reply     string    `json:"reply,omitempty"`
}

// DreamResult is what a Dream run did.
type DreamResult struct {
	Entries int      `json:"entries"`
	Commit  string   `json:"commit,omitempty"`
	Changed []string `json:"changed,omitempty"`
	Text    string   `json:"text"`
}
