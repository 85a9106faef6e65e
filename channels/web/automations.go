package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/schedules"
)

// Automation is one schedule the agent owns, as the schedules page shows it.
type Automation struct {
	ID     string          `json:"id"` // the schedule's ID in Temporal
	Name   string          `json:"name"`
	Kind   schedules.Kind  `json:"kind"`
	Paused bool            `json:"paused"`
	Next   *time.Time      `json:"next,omitempty"` // nil while paused
	Runs   []AutomationRun `json:"runs"`           // newest first
	// Deletable: only cron jobs; upkeep schedules follow the config.
	Deletable bool `json:"deletable"`
}

// AutomationRun is one run a schedule started.
type AutomationRun struct {
	At         time.Time `json:"at"`
	WorkflowID string    `json:"workflow_id"`
	RunID      string    `json:"run_id"`
	Result     string    `json:"result"` // the run's workflow status: Running, Completed, Failed …
	Inspect    string    `json:"inspect,omitempty"`
}

// Schedule actions the page may ask for.
const (
	actionPause  = "pause"
	actionResume = "resume"
	actionRun    = "run"
	actionDelete = "delete"
)

// Automations lists and drives the agent's schedules (TemporalAutomations does).
type Automations interface {
	List(ctx context.Context) ([]Automation, error)
	Act(ctx context.Context, id, action string) error
}

// errNotOurs is a schedule ID this agent does not own, or an action its kind refuses.
type errNotOurs struct{ error }

// TemporalAutomations reads this instance's schedules from Temporal.
type TemporalAutomations struct {
	Client   sdkclient.Client
	Instance protocol.Instance
}

// ownKinds are the schedules the page shows; anything else in the namespace is not the agent's.
var ownKinds = map[schedules.Kind]bool{schedules.KindCron: true, schedules.KindHeartbeat: true, schedules.KindMemory: true, schedules.KindDisk: true}

// recentRuns bounds the runs shown per schedule.
const recentRuns = 5

// List implements Automations.
func (t TemporalAutomations) List(ctx context.Context) ([]Automation, error) {
	ids, err := schedules.IDs(ctx, t.Client, t.Instance.Name(""))
	if err != nil {
		return nil, err
	}
	out := []Automation{}
	for _, id := range ids {
		a, err := t.describe(ctx, id)
		if schedules.IsNotFound(err) || errors.As(err, new(errNotOurs)) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func (t TemporalAutomations) describe(ctx context.Context, id string) (Automation, error) {
	desc, err := schedules.Describe(ctx, t.Client, id)
	if err != nil {
		return Automation{}, err
	}
	var kind schedules.Kind
	name := memoString(desc.Memo, "name")
	kind = schedules.Kind(memoString(desc.Memo, "kind"))
	if !ownKinds[kind] {
		return Automation{}, errNotOurs{fmt.Errorf("schedule %s is not one of this agent's", id)}
	}
	a := Automation{ID: id, Name: name, Kind: kind, Deletable: kind == schedules.KindCron, Runs: []AutomationRun{}}
	if st := desc.Schedule.State; st != nil && st.Paused {
		a.Paused = true // Temporal still lists the times a paused schedule would fire at; it will not
	} else if len(desc.Info.NextActionTimes) > 0 {
		n := desc.Info.NextActionTimes[0]
		a.Next = &n
	}
	recent := desc.Info.RecentActions
	for i := len(recent) - 1; i >= 0 && len(a.Runs) < recentRuns; i-- {
		r := recent[i]
		run := AutomationRun{At: r.ActualTime}
		if r.StartWorkflowResult != nil {
			run.WorkflowID, run.RunID = r.StartWorkflowResult.WorkflowID, r.StartWorkflowResult.FirstExecutionRunID
			run.Result = t.status(ctx, run.WorkflowID, run.RunID)
		}
		a.Runs = append(a.Runs, run)
	}
	return a, nil
}

// status is a run's workflow status in words ("unknown" when Temporal no longer has it).
func (t TemporalAutomations) status(ctx context.Context, wid, rid string) string {
	d, err := t.Client.DescribeWorkflowExecution(ctx, wid, rid)
	if err != nil {
		return "unknown"
	}
	s := d.GetWorkflowExecutionInfo().GetStatus().String()
	return strings.TrimPrefix(s, "WorkflowExecutionStatus")
}

func memoString(m *commonpb.Memo, key string) string {
	if m == nil || m.Fields[key] == nil {
		return ""
	}
	var s string
	_ = converter.GetDefaultDataConverter().FromPayload(m.Fields[key], &s)
	return s
}

// Act implements Automations: the schedule must be this agent's; only a cron job is deleted.
func (t TemporalAutomations) Act(ctx context.Context, id, action string) error {
	a, err := t.describe(ctx, id)
	if schedules.IsNotFound(err) {
		return errNotOurs{fmt.Errorf("no schedule %s", id)}
	}
	if err != nil {
		return err
	}
	h := t.Client.ScheduleClient().GetHandle(ctx, id)
	switch action {
	case actionPause:
		err = h.Pause(ctx, sdkclient.SchedulePauseOptions{Note: "paused from the web chat"})
	case actionResume:
		err = h.Unpause(ctx, sdkclient.ScheduleUnpauseOptions{Note: "resumed from the web chat"})
	case actionRun:
		err = schedules.Trigger(ctx, t.Client, id)
	case actionDelete:
		if !a.Deletable {
			return errNotOurs{fmt.Errorf("schedule %s is %s upkeep: it follows the config, turn it off there", id, a.Kind)}
		}
		err = schedules.Delete(ctx, t.Client, id)
	default:
		return errNotOurs{fmt.Errorf("action %q: want pause, resume, run or delete", action)}
	}
	if err != nil {
		return fmt.Errorf("%s schedule %s: %w", action, id, err)
	}
	return nil
}

// UseAutomations lets the schedules page list and drive the agent's schedules.
func (c *Channel) UseAutomations(a Automations) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scheduled = a
}

// automations is the channel's, when the gateway reaches Temporal.
func (c *Channel) automations() Automations {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scheduled
}

// listSchedules answers GET /api/schedules, each run with its inspect link.
func (c *Channel) listSchedules(w http.ResponseWriter, r *http.Request) {
	a := c.automations()
	if a == nil {
		writeError(w, http.StatusServiceUnavailable, "this gateway does not reach Temporal")
		return
	}
	list, err := a.List(r.Context())
	if err != nil {
		c.log.Error("listing the schedules failed", "error", err)
		writeError(w, http.StatusBadGateway, "could not list the schedules: "+err.Error())
		return
	}
	c.mu.Lock()
	ui, ns := c.uiURL, c.ns
	c.mu.Unlock()
	if ui != "" {
		for i := range list {
			for j := range list[i].Runs {
				run := &list[i].Runs[j]
				if run.WorkflowID != "" {
					run.Inspect = ui + "/namespaces/" + url.PathEscape(ns) + "/workflows/" + url.PathEscape(run.WorkflowID) + "/" + url.PathEscape(run.RunID) + "/history"
				}
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedules": list})
}

// scheduleRequest is POST /api/schedule's body.
type scheduleRequest struct {
	ID     string `json:"id"`
	Action string `json:"action"`
}

// actOnSchedule answers POST /api/schedule {"id", "action"}.
func (c *Channel) actOnSchedule(w http.ResponseWriter, r *http.Request) {
	var req scheduleRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil || req.ID == "" || req.Action == "" {
		writeError(w, http.StatusBadRequest, `want JSON {"id", "action"}`)
		return
	}
	if !strings.HasPrefix(req.ID, c.instance.Name("")) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("schedule %s is not one of this agent's", req.ID))
		return
	}
	a := c.automations()
	if a == nil {
		writeError(w, http.StatusServiceUnavailable, "this gateway does not reach Temporal")
		return
	}
	err := a.Act(r.Context(), req.ID, req.Action)
	var refused errNotOurs
	switch {
	case errors.As(err, &refused):
		writeError(w, http.StatusBadRequest, refused.Error())
	case err != nil:
		c.log.Error("a schedule action failed", "schedule", req.ID, "action", req.Action, "error", err)
		writeError(w, http.StatusBadGateway, err.Error())
	default:
		c.log.Info("schedule changed from the web chat", "schedule", req.ID, "action", req.Action)
		writeJSON(w, http.StatusOK, map[string]string{"id": req.ID, "action": req.Action})
	}
}
