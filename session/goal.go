package session

import "encoding/json"

// GoalKey is the metadata key a session keeps its sustained goal (/goal) under.
const GoalKey = "goal"

// The states of a goal: active until the agent ends it with update_goal.
const (
	GoalActive    = "active"
	GoalComplete  = "complete"
	GoalCancelled = "cancelled"
	GoalBlocked   = "blocked"
)

// Goal is a session's sustained goal: while it is active, a final answer is
// followed by a prompt to go on.
type Goal struct {
	Objective string `json:"objective"`
	Summary   string `json:"ui_summary,omitempty"`
	Status    string `json:"status"` // GoalActive, GoalComplete, GoalCancelled or GoalBlocked
	Reason    string `json:"reason,omitempty"`
	// Since is when it was set (empty for a goal set before it was kept); Updated when it last changed.
	Since   string `json:"since,omitempty"`
	Updated string `json:"updated"`
	// Turn is the run ID of the turn that last changed it (its Temporal run).
	Turn string `json:"turn,omitempty"`
}

// Label is how a goal is named to the user: its summary, or its objective.
func (g *Goal) Label() string {
	if g.Summary != "" {
		return g.Summary
	}
	return g.Objective
}

// GoalOf reads a session's goal (nil when it never had one).
func GoalOf(s *Session) *Goal {
	v, ok := s.Metadata[GoalKey]
	if !ok || v == nil {
		return nil
	}
	if g, ok := v.(*Goal); ok {
		return g
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var g Goal
	if json.Unmarshal(raw, &g) != nil || g.Objective == "" {
		return nil
	}
	return &g
}
