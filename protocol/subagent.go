package protocol

import (
	"fmt"
	"hash/fnv"

	"go.temporal.io/sdk/temporal"
)

// Subagents: a spawn tool call in a turn starts a SubagentWorkflow (a child
// that outlives the turn) which runs the same model ⇄ tools loop in its own
// session and announces its result into the origin session.
const (
	SubagentWorkflowName = "SubagentWorkflow"

	ActivityPrepareSpawn  = "PrepareSpawn"
	ActivitySubagentBuild = "SubagentBuild"
	ActivityAnnounce      = "Announce"
)

// SubagentID names a subagent after the spawn call that started it (the
// turn's run ID and the call's ID), so a replayed or retried turn finds the
// same child instead of starting a second, and a turn's page finds it.
func SubagentID(turn, callID string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(turn + "/" + callID))
	return fmt.Sprintf("%08x", h.Sum32())
}

// SubagentWorkflowID is the workflow ID of one subagent.
func SubagentWorkflowID(id string) string { return "subagent/" + id }

// SubagentSessionKey is the session a subagent keeps its journal in.
func SubagentSessionKey(id string) string { return "subagent:" + id }

// SpawnRef points at a spawn call in its turn's journal.
type SpawnRef struct {
	SessionKey string `json:"session_key"`
	Turn       string `json:"turn"`
	LLMEntry   string `json:"llm_entry"`
	CallID     string `json:"call_id"`
	// Profile is the spawning turn's: the policy may refuse spawn, as any tool.
	Profile Profile `json:"profile,omitzero"`
}

// PrepareSpawnResult is what a spawn call asks for, once checked.
type PrepareSpawnResult struct {
	// Refused is the tool error to give the model (bad arguments, too many running).
	Refused string `json:"refused,omitempty"`
	Label   string `json:"label"`
	Wait    bool   `json:"wait"`
	// SearchAttributes: the namespace has nanobot's, so the subagent carries them.
	SearchAttributes bool `json:"search_attributes,omitempty"`
}

// SubagentInput starts (or continues) a subagent.
type SubagentInput struct {
	ID        string   `json:"id"`
	Label     string   `json:"label"`
	Spawn     SpawnRef `json:"spawn"` // where the task is (its text stays in the journal)
	OriginKey string   `json:"origin_key"`
	Origin    Route    `json:"origin"`
	Settings  Settings `json:"settings"`
	// Wait: the parent waits for the result (spawn wait=true); nothing is announced.
	Wait   bool         `json:"wait,omitempty"`
	Resume *RunnerState `json:"resume,omitempty"`
}

// SubagentResult is how a subagent ended.
type SubagentResult struct {
	ID            string `json:"id"`
	Label         string `json:"label"`
	StopReason    string `json:"stop_reason"`
	ResultPreview string `json:"result_preview"`
	Iterations    int    `json:"iterations"`
}

// AnnounceInput tells the origin session what a subagent did.
type AnnounceInput struct {
	Subagent   SubagentInput `json:"subagent"`
	Turn       string        `json:"turn"`
	FinalEntry string        `json:"final_entry,omitempty"`
	Text       string        `json:"text,omitempty"` // the reply when no journal entry holds it (errors)
	StopReason string        `json:"stop_reason"`
}

// Search attributes of nanobot's workflows, so the Web UI can list a
// session's or a channel's turns and subagents.
var (
	SessionKeyAttribute = temporal.NewSearchAttributeKeyKeyword("NanobotSessionKey")
	ChannelAttribute    = temporal.NewSearchAttributeKeyKeyword("NanobotChannel")
)
