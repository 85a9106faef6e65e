// Package protocol holds what crosses the Temporal boundary: workflow
// inputs, signals, activity names and their payloads. Payloads carry IDs,
// small fields and previews, never the transcript (ARCHITECTURE.md §2).
package protocol

import (
	"fmt"
	"strings"
	"time"
)

// Task queues and names shared by starters, workflows and workers.
const (
	TaskQueue = "nanobot" // turn workflows, their local activities, tools, and model calls while a slot is free
	// LLMTaskQueue takes the model calls that found no free slot on the turn's
	// queue, memory consolidation and heartbeat decisions; the worker's slots cap it.
	LLMTaskQueue = "nanobot-llm"
	// WorkspaceTaskQueue: what reads or writes the workspace (tools, prompt
	// files, Dream's edits), polled only by the process that holds it.
	WorkspaceTaskQueue = "nanobot-workspace"

	TurnWorkflowName = "TurnWorkflow"
	SignalInbound    = "inbound"
	QueryState       = "state"
	// UpdateWithdraw takes a queued message (by its ID) back from the session's turn before the turn reads it.
	UpdateWithdraw = "withdraw"

	ActivityRestore = "Restore"
	ActivityCompact = "Compact"
	ActivityCommand = "Command"
	ActivityBuild   = "Build"
	// ActivityBuildHere is BUILD as a local activity on the turn's worker: the workspace host runs it,
	// any other worker answers ErrNotHere and the workflow sends ActivityBuild to the workspace queue.
	ActivityBuildHere = "BuildHere"
	ActivitySave      = "Save"
	ActivityLLMCall   = "LLMCall"
	ActivityTool      = "ToolCall"
	// ActivityToolResult journals a result the workflow produced for a call (spawn's, a failed call's).
	ActivityToolResult = "ToolResult"
	// ActivityEndExecSessions ends a stopped session's exec sessions, where the workspace is.
	ActivityEndExecSessions = "EndExecSessions"
	ActivityDeliver         = "Deliver"
	ActivityInject          = "Inject"
	// ActivityMarkUndelivered notes a reply whose process went away, for the next CLI.
	ActivityMarkUndelivered = "MarkUndelivered"

	// PreviewBytes bounds every text field of a payload.
	PreviewBytes = 2048
	// ToolPreviewBytes bounds a successful tool result's preview: the workflow
	// reads only its start, the journal keeps the whole result.
	ToolPreviewBytes = 512
)

// TurnWorkflowID is the one workflow ID of a session's turns.
func TurnWorkflowID(sessionKey string) string { return "turn/" + sessionKey }

// SessionKey is nanobot's "channel:chat_id".
func SessionKey(channel, chatID string) string { return channel + ":" + chatID }

// SplitSessionKey undoes SessionKey.
func SplitSessionKey(key string) (channel, chatID string, err error) {
	channel, chatID, ok := strings.Cut(key, ":")
	if !ok || channel == "" || chatID == "" {
		return "", "", fmt.Errorf("session key %q: want channel:chat_id", key)
	}
	return channel, chatID, nil
}

// Settings are the per-turn knobs fixed when a run starts, so that replays
// see the same values whatever the worker's config says later
// (config.TurnSettings makes them, with every default).
type Settings struct {
	Model               string        `json:"model"`
	MaxIterations       int           `json:"max_iterations,omitempty"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	ContextWindowTokens int           `json:"context_window_tokens,omitempty"`
	Stream              bool          `json:"stream,omitempty"`
	LLMTimeout          time.Duration `json:"llm_timeout,omitempty"`
	LLMHeartbeat        time.Duration `json:"llm_heartbeat,omitempty"`
	LLMMaxAttempts      int32         `json:"llm_max_attempts,omitempty"`
	ToolTimeout         time.Duration `json:"tool_timeout,omitempty"`
	// ConsolidationRatio: consolidation archives until the prompt is at most budget × this.
	ConsolidationRatio float64 `json:"consolidation_ratio,omitempty"`
	// ApprovalTimeout is how long a call that needs approval waits (tools.approval.timeoutS).
	ApprovalTimeout time.Duration `json:"approval_timeout,omitempty"`
	// MaxRepeatedToolCalls: the same call with the same arguments runs at most this often per turn.
	MaxRepeatedToolCalls int `json:"max_repeated_tool_calls,omitempty"`
	// Timezone is the user's IANA timezone (agents.defaults.timezone): the runtime context tells the time in it.
	Timezone string `json:"timezone,omitempty"`
	// FailOnToolError: a subagent stops at its first tool error (agents.defaults.failOnToolError).
	FailOnToolError bool `json:"fail_on_tool_error,omitempty"`
	// ContextBlockLimit replaces the input budget history is trimmed to (agents.defaults.contextBlockLimit; 0 = none).
	ContextBlockLimit int `json:"context_block_limit,omitempty"`
	// SendMaxRetries is how often a reply is tried (channels.sendMaxRetries, the first send included; 0 = the default).
	SendMaxRetries int32 `json:"send_max_retries,omitempty"`
	// WorkspaceQueue is where the turn's prompt is built and its tools run when
	// the state is shared and workers hold no workspace ("" = the turn's own queue).
	WorkspaceQueue string `json:"workspace_queue,omitempty"`
}

// ForModelCall is what one model call reads of the settings: the rest stays
// in the workflow, so each LLMCall input (and its history event) stays small.
func (s Settings) ForModelCall() Settings {
	return Settings{
		Model: s.Model, MaxTokens: s.MaxTokens, ContextWindowTokens: s.ContextWindowTokens, Stream: s.Stream,
		ContextBlockLimit: s.ContextBlockLimit, Timezone: s.Timezone,
		WorkspaceQueue: s.WorkspaceQueue, // the tools offered come from the workspace host's list
	}
}

// TurnInput starts a run of TurnWorkflow.
type TurnInput struct {
	SessionKey string    `json:"session_key"`
	Settings   Settings  `json:"settings"`
	Carry      []Inbound `json:"carry,omitempty"` // messages left over by the previous run
	// Resume continues a turn in a fresh run when history grew long.
	Resume *TurnResume `json:"resume,omitempty"`
}

// TurnResume is what a turn carries into its next run: IDs and counters,
// the transcript stays in the journal.
type TurnResume struct {
	Turn      string       `json:"turn"`
	Message   Inbound      `json:"message"`
	Answered  []Inbound    `json:"answered"`
	Delivered int          `json:"delivered"`
	Started   time.Time    `json:"started"`
	Runner    RunnerState  `json:"runner"`
	Trace     []TraceEntry `json:"trace"`
	// OriginAnswered: the message tool already answered the origin chat.
	OriginAnswered bool `json:"origin_answered,omitempty"`
	// Profile is the turn's rules on tools, fixed at COMMAND.
	Profile Profile `json:"profile,omitzero"`
}

// RunnerState is the runner loop's counters.
type RunnerState struct {
	Iteration        int      `json:"iteration"`
	Calls            int      `json:"calls"`
	EmptyRetries     int      `json:"empty_retries"`
	LengthRecoveries int      `json:"length_recoveries"`
	Segments         []string `json:"segments,omitempty"`
	MalformedRetried bool     `json:"malformed_retried,omitempty"`
	InjectionCycles  int      `json:"injection_cycles"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	CachedTokens     int      `json:"cached_tokens,omitempty"`
	// GoalContinuations counts the prompts to go on with an active goal.
	GoalContinuations int `json:"goal_continuations,omitempty"`
	// Repeats counts each call signature (tool + arguments) of this turn.
	Repeats map[string]int `json:"repeats,omitempty"`
	// RepeatStrikes counts the calls refused as repeats; the second ends the tools.
	RepeatStrikes int `json:"repeat_strikes,omitempty"`
	// Always are the approval keys this turn was told "always" for: read and
	// written only by runs before the approval-proof marker (later ones ask the session).
	Always []string `json:"always,omitempty"`
}

// TraceEntry records one state of a turn.
type TraceEntry struct {
	State      string    `json:"state"`
	Start      time.Time `json:"start"`
	DurationMS int64     `json:"duration_ms"`
	Event      string    `json:"event"`
	Error      string    `json:"error,omitempty"`
}

// TurnState answers the `state` query.
type TurnState struct {
	SessionKey string       `json:"session_key"`
	State      string       `json:"state"`
	Iteration  int          `json:"iteration"`
	Trace      []TraceEntry `json:"trace"`
	// Hints are the progress lines of the tool calls this run started, in order.
	Hints []string `json:"hints,omitempty"`
	// Waiting is the approval request the turn waits on, if any.
	Waiting *ApprovalRequest `json:"waiting,omitempty"`
	// Queued are the messages that arrived during the turn and wait to be injected or to start the next one.
	Queued []QueuedMessage `json:"queued,omitempty"`
}

// QueuedMessage is a message waiting behind the running turn of its session.
type QueuedMessage struct {
	ID      string `json:"id"`
	Preview string `json:"preview"`
}

// Withdrawn answers UpdateWithdraw: the message the turn gave back, never to be answered.
type Withdrawn struct {
	ID      string `json:"id"`
	Preview string `json:"preview"`
}

// TurnResult is what a finished run returns.
type TurnResult struct {
	SessionKey   string       `json:"session_key"`
	MessageIDs   []string     `json:"message_ids"`
	ReplyPreview string       `json:"reply_preview"`
	StopReason   string       `json:"stop_reason"`
	Iterations   int          `json:"iterations"`
	Trace        []TraceEntry `json:"trace"`
}

// StepInput is what the state activities get.
type StepInput struct {
	SessionKey string   `json:"session_key"`
	Turn       string   `json:"turn"`
	Message    Inbound  `json:"message"`
	Settings   Settings `json:"settings"`
	// Running describes the session's running turn, for a command answered inline.
	Running string `json:"running,omitempty"`
}

// RestoreResult tells what RESTORE found.
type RestoreResult struct {
	// Model, MaxTokens and ContextWindowTokens are set when the session
	// switched models (/model): the turn runs with them.
	Model               string `json:"model,omitempty"`
	MaxTokens           int    `json:"max_tokens,omitempty"`
	ContextWindowTokens int    `json:"context_window_tokens,omitempty"`
	Messages            int    `json:"messages"`
	ClosedPending       bool   `json:"closed_pending"` // an unanswered earlier turn got the interruption note
	SkippedLines        int    `json:"skipped_lines"`
	EstimatedTokens     int    `json:"estimated_tokens"`
	// Budget is the input budget EstimatedTokens is held against.
	Budget int `json:"budget,omitempty"`
}

// CompactResult tells what COMPACT did.
type CompactResult struct {
	Compacted bool   `json:"compacted"`
	Note      string `json:"note,omitempty"`
}

// CommandResult tells whether COMMAND handled the message itself.
type CommandResult struct {
	Handled bool   `json:"handled"`
	Command string `json:"command,omitempty"`
	Reply   string `json:"reply,omitempty"` // at most PreviewBytes; the full text is EntryID's
	// EntryID is the journaled reply (commands kept in the session), for delivery.
	EntryID string `json:"entry_id,omitempty"`
	// Goal: a /goal message; the turn goes to the model, which may create the goal.
	Goal bool `json:"goal,omitempty"`
	// ApprovalAnswered: an /approve or /deny reached the task that asked.
	ApprovalAnswered bool `json:"approval_answered,omitempty"`
}

// BuildResult tells what BUILD prepared.
type BuildResult struct {
	SystemPromptChars int `json:"system_prompt_chars"`
	HistoryMessages   int `json:"history_messages"`
}

// SaveInput closes a turn in the journal.
type SaveInput struct {
	StepInput
	StopReason string `json:"stop_reason"`
	LatencyMS  int64  `json:"latency_ms"`
	FinalEntry string `json:"final_entry,omitempty"`
	// Reply is the text to journal when no model message holds it (max iterations).
	Reply string `json:"reply,omitempty"`
	// Segments are the entries of a reply cut by the output limit and
	// continued; SAVE joins them into one message.
	Segments []string `json:"segments,omitempty"`
	// Usage of the turn's model calls, added to the session's totals.
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
}

// LLMCallInput asks for one model iteration of a turn.
type LLMCallInput struct {
	SessionKey string `json:"session_key"`
	Turn       string `json:"turn"`
	Iteration  int    `json:"iteration"`
	// Call numbers the model calls of a turn (retries and recoveries
	// included); it names the journal entry.
	Call int    `json:"call"`
	Mode string `json:"mode,omitempty"` // a recovery mode: one of the Mode* constants
	// Settings are Settings.ForModelCall() since model-call-on-turn-queue; older runs sent them whole.
	Settings Settings `json:"settings"`
	// Route is where the turn's message came from: streamed deltas go there.
	Route Route `json:"route"`
	// Profile says which tools the model is offered.
	Profile Profile `json:"profile,omitzero"`
}

// Recovery modes of a model call: each adds one transient instruction
// (never journaled) after the history.
const (
	ModeEmptyRetry = "empty_retry" // second blank answer: ask for the answer, without tools
	ModeLength     = "length"      // the last answer was cut at the output limit: continue it
	ModeMalformed  = "malformed"   // every tool call was malformed: one corrective retry
	ModeFinalize   = "finalize"    // the iteration budget is spent: answer without tools
	ModeRepeated   = "repeated"    // the model kept repeating a call after guidance: answer without tools
)

// InjectInput journals messages that arrived while the turn ran.
type InjectInput struct {
	SessionKey string    `json:"session_key"`
	Turn       string    `json:"turn"`
	Cycle      int       `json:"cycle"`
	Messages   []Inbound `json:"messages"`
	// GoalContinue journals the prompt to go on with the session's active goal instead.
	GoalContinue bool `json:"goal_continue,omitempty"`
}

// ToolCallRef is a tool call as the workflow sees it.
type ToolCallRef struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	ArgsPreview string `json:"args_preview"`
	// ConcurrencySafe calls of one batch may run in parallel.
	ConcurrencySafe bool `json:"concurrency_safe,omitempty"`
	// Hint is the progress line shown while the call runs ("read_file README.md").
	Hint string `json:"hint,omitempty"`
	// Summary is the key argument for the Web UI ("path=README.md").
	Summary string `json:"summary,omitempty"`
	// Signature is the call's tool and arguments, hashed: the repeated-call guard's key.
	Signature string `json:"signature,omitempty"`
	// Ask, when set, means a person must approve the call before it runs.
	Ask *AskRef `json:"ask,omitempty"`
}

// LLMCallResult is one model reply; its full text stays in the journal.
type LLMCallResult struct {
	EntryID        string `json:"entry_id"`
	ContentPreview string `json:"content_preview"`
	ContentChars   int    `json:"content_chars"`
	// DroppedCalls counts malformed tool calls (no name) left out of the journal.
	DroppedCalls     int           `json:"dropped_calls,omitempty"`
	ToolCalls        []ToolCallRef `json:"tool_calls,omitempty"`
	FinishReason     string        `json:"finish_reason"`
	Model            string        `json:"model"`
	PromptTokens     int           `json:"prompt_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	// CachedTokens is the part of PromptTokens the provider served from its cache.
	CachedTokens int  `json:"cached_tokens,omitempty"`
	FromJournal  bool `json:"from_journal"` // a retry found the reply already journaled
	// GoalActive: the session has an active sustained goal; a final answer is followed by a prompt to go on.
	GoalActive bool `json:"goal_active,omitempty"`
	// Drawn is the chat message this call's streamed text was drawn into by
	// the process that ran it; the answer edits it wherever it is delivered.
	Drawn string `json:"drawn,omitempty"`
}

// ToolCallInput asks to run one tool call that the journal holds.
type ToolCallInput struct {
	SessionKey string `json:"session_key"`
	Turn       string `json:"turn"`
	Iteration  int    `json:"iteration"`
	CallID     string `json:"call_id"`
	Name       string `json:"name"`
	// LLMEntry is the journal entry of the reply that made the call.
	LLMEntry string `json:"llm_entry"`
	// Route is the turn's origin: the message tool's default target, where progress is shown.
	Route Route `json:"route"`
	// Profile says whether the call may run, and where its paths may reach.
	Profile Profile `json:"profile,omitzero"`
	// Hints are the progress lines the call shows when it starts: its own,
	// or all of a parallel batch's on its first call, so the chat shows
	// them in the model's order whichever call starts first.
	Hints []string `json:"hints,omitempty"`
	// Approved: a person approved this call (it may run although the policy asks, or the deny list matches).
	Approved bool `json:"approved,omitempty"`
}

// ToolResultInput journals a result the workflow itself produced (spawn's, a failed call's).
type ToolResultInput struct {
	SessionKey string `json:"session_key"`
	Turn       string `json:"turn"`
	CallID     string `json:"call_id"`
	Name       string `json:"name"`
	Text       string `json:"text"`
	IsError    bool   `json:"is_error,omitempty"`
}

// ToolCallResult is a tool's outcome; its full text stays in the journal.
type ToolCallResult struct {
	Preview     string `json:"preview"`
	Chars       int    `json:"chars"`
	IsError     bool   `json:"is_error"`
	FromJournal bool   `json:"from_journal"`
	Unknown     bool   `json:"unknown,omitempty"` // a claimed side effect whose outcome was lost
	// AnsweredOrigin: the tool sent a message to the chat the turn answers
	// (the message tool), so the final reply is not sent there again.
	AnsweredOrigin bool `json:"answered_origin,omitempty"`
}

// DeliverInput hands a reply to the process that owns the channel.
type DeliverInput struct {
	SessionKey string   `json:"session_key"`
	Turn       string   `json:"turn"`
	Route      Route    `json:"route"`
	MessageIDs []string `json:"message_ids"`
	// Text is the reply when it is short; otherwise EntryID points into the journal.
	Text string `json:"text,omitempty"`
	// Media are files to attach (workspace paths or URLs).
	Media      []string  `json:"media,omitempty"`
	EntryID    string    `json:"entry_id,omitempty"`
	StopReason string    `json:"stop_reason,omitempty"`
	Kind       ReplyKind `json:"kind,omitempty"`
	// Approval is the request a ReplyApproval shows (buttons where the chat has them).
	Approval *ApprovalRequest `json:"approval,omitempty"`
	// MaxAttempts bounds the delivery's tries (channels.sendMaxRetries); 0 = the default.
	MaxAttempts int32 `json:"max_attempts,omitempty"`
	// Drawn is the message the answer was streamed into (LLMCallResult.Drawn).
	Drawn string `json:"drawn,omitempty"`
}

// ReplyKind says what a reply is; why its turn stopped is its StopReason.
type ReplyKind string

// The kinds of replies.
const (
	ReplyAnswer  ReplyKind = ""        // a turn's (or a command's) answer: it closes the turn in the chat
	ReplyMessage ReplyKind = "message" // a message tool send: the turn goes on
	ReplySystem  ReplyKind = "system"  // said by the gateway itself (a pairing code, /stop)
)

// Application error types that activities return and workflows read.
const (
	ErrProviderRetryable    = "ProviderRetryable"
	ErrProviderNonRetryable = "ProviderNonRetryable"
	ErrProviderArrears      = "ProviderArrears"
	ErrConfig               = "ConfigError"
	// ErrDeliveryRejected marks a delivery the platform refused for good
	// (chat not found, bot blocked): retrying cannot help.
	ErrDeliveryRejected = "DeliveryRejected"
	// ErrBusy: a model call on the turn's queue found every model-call slot of
	// its process taken; the workflow asks again on LLMTaskQueue.
	ErrBusy = "Busy"
	// ErrNotHere: a workspace step tried on the turn's worker found the workspace on another host.
	ErrNotHere = "NotHere"
	// ErrWithdrawTaken: the message to withdraw is already part of the running turn (injected or its own).
	ErrWithdrawTaken = "WithdrawTaken"
	// ErrWithdrawUnknown: the turn has no such message waiting (answered in an earlier turn, withdrawn, never sent).
	ErrWithdrawUnknown = "WithdrawUnknown"
)

// Stop reasons, as nanobot names them.
const (
	StopCompleted     = "completed"
	StopError         = "error"
	StopMaxIterations = "max_iterations"
	StopRepeatedCalls = "repeated_tool_calls"
	StopEmptyFinal    = "empty_final_response"
	StopCommand       = "command"
	StopCancelled     = "cancelled"
	// StopToolError: a tool failed and agents.defaults.failOnToolError ended the loop (subagents).
	StopToolError = "tool_error"
	// StopFailed: the turn failed (a step that failed for good); the chat was told.
	StopFailed = "failed"
)

// MessageWorkflowName delivers one message the agent sends with the message tool.
const MessageWorkflowName = "MessageWorkflow"

// MessageInput is a message tool send: where to deliver, and what.
type MessageInput struct {
	Deliver DeliverInput `json:"deliver"`
}

// ChannelQueue is the delivery queue of a channel run by a gateway.
func ChannelQueue(channel string) string { return "nanobot-channel-" + channel }

// ParseCommand splits "/cmd@bot args" into "/cmd" (lower-cased) and args;
// ok is false for text that is not a slash command.
func ParseCommand(text string) (name, args string, ok bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") || len(text) < 2 {
		return "", "", false
	}
	head, rest, _ := strings.Cut(text, " ")
	if at := strings.Index(head, "@"); at > 0 {
		head = head[:at]
	}
	return strings.ToLower(head), strings.TrimSpace(rest), true
}
