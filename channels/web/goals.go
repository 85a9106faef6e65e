package web

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/nanobot-durable/nanobot/session"
)

// maxEndedGoals bounds the ended goals the schedules page lists (the newest); active and blocked ones are all listed.
const maxEndedGoals = 10

// goalView is one session's sustained goal, as the schedules page lists it.
type goalView struct {
	Session string `json:"session"`
	session.Goal
	// Inspect is the Web UI address of the turn that last changed the goal ("" without a UI or a turn).
	Inspect string `json:"inspect,omitempty"`
}

// goals lists the sessions' goals: every active or blocked one, and the
// newest ended ones; those still open first, then newest first.
func (c *Channel) goals(ctx context.Context) ([]goalView, error) {
	infos, err := c.store.SessionsOfKind("")
	if err != nil {
		return nil, fmt.Errorf("list the sessions: %w", err)
	}
	open, ended := []goalView{}, []goalView{}
	for _, in := range infos {
		s, err := c.store.Load(ctx, in.Key)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", in.Key, err)
		}
		g := session.GoalOf(s)
		if g == nil {
			continue
		}
		v := goalView{Session: in.Key, Goal: *g}
		if base := c.inspectBase(in.Key); base != "" && g.Turn != "" {
			v.Inspect = base + g.Turn + "/history"
		}
		if g.Status == session.GoalActive || g.Status == session.GoalBlocked {
			open = append(open, v)
		} else {
			ended = append(ended, v)
		}
	}
	newest := func(a, b goalView) int { return cmp.Compare(b.Updated, a.Updated) } // TimeLayout sorts as text
	slices.SortFunc(open, newest)
	slices.SortFunc(ended, newest)
	return append(open, ended[:min(len(ended), maxEndedGoals)]...), nil
}

// listGoals answers GET /api/goals.
func (c *Channel) listGoals(w http.ResponseWriter, r *http.Request) {
	list, err := c.goals(r.Context())
	if err != nil {
		c.log.Error("listing the goals failed", "error", err)
		writeError(w, http.StatusInternalServerError, "could not list the goals: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"goals": list})
}
