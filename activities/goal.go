package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
)

// goalKey is where a session keeps its sustained goal.
const goalKey = "goal"

// Goal is a session's sustained goal (/goal): while it is active, a final
// answer is followed by a prompt to go on.
type Goal struct {
	Objective string `json:"objective"`
	Summary   string `json:"ui_summary,omitempty"`
	Status    string `json:"status"` // active | complete | cancelled | blocked
	Reason    string `json:"reason,omitempty"`
	Updated   string `json:"updated"`
}

const goalActive = "active"

// GoalOf reads a session's goal (nil when it never had one).
func GoalOf(s *session.Session) *Goal {
	v, ok := s.Metadata[goalKey]
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

func goalIsActive(s *session.Session) bool {
	g := GoalOf(s)
	return g != nil && g.Status == goalActive
}

// GoalStore keeps goals in the session journal's metadata (tools.GoalStore).
type GoalStore struct{ Store session.Store }

// CreateGoal implements tools.GoalStore.
func (g GoalStore) CreateGoal(ctx context.Context, env tools.Env, objective, summary string) (string, error) {
	var msg string
	err := g.Store.Update(ctx, env.SessionKey, func(s *session.Session) error {
		if cur := GoalOf(s); cur != nil && cur.Status == goalActive {
			if cur.Objective == objective {
				msg = "Goal created: " + goalLabel(cur) // a retried call
				return nil
			}
			return fmt.Errorf("a goal is already active (%s); end or replace it with update_goal", goalLabel(cur))
		}
		s.Metadata[goalKey] = &Goal{Objective: objective, Summary: summary, Status: goalActive, Updated: now()}
		msg = "Goal created: " + goalLabel(s.Metadata[goalKey].(*Goal)) +
			". Keep working until it is done, then call update_goal with action=complete."
		return nil
	})
	return msg, err
}

// UpdateGoal implements tools.GoalStore.
func (g GoalStore) UpdateGoal(ctx context.Context, env tools.Env, action, objective, summary, reason string) (string, error) {
	var msg string
	err := g.Store.Update(ctx, env.SessionKey, func(s *session.Session) error {
		cur := GoalOf(s)
		if cur == nil || cur.Status != goalActive {
			return errors.New("there is no active goal")
		}
		next := *cur
		next.Updated, next.Reason = now(), reason
		switch action {
		case "complete":
			next.Status, msg = "complete", "Goal completed: "+goalLabel(cur)+"."
		case "cancel":
			next.Status, msg = "cancelled", "Goal cancelled: "+goalLabel(cur)+"."
		case "block":
			next.Status, msg = "blocked", "Goal blocked: "+goalLabel(cur)+". Tell the user what you need."
		case "replace":
			next.Objective, next.Summary = objective, summary
			msg = "Goal replaced: " + goalLabel(&next) + "."
		default:
			return fmt.Errorf("unknown action %q (complete, cancel, block or replace)", action)
		}
		s.Metadata[goalKey] = &next
		return nil
	})
	return msg, err
}

func goalLabel(g *Goal) string {
	if g.Summary != "" {
		return g.Summary
	}
	return g.Objective
}

func now() string { return time.Now().Format(session.TimeLayout) }

// goalTurnContent is what a /goal message tells the model.
func goalTurnContent(text string) string {
	name, task, ok := protocol.ParseCommand(text)
	if !ok || name != "/goal" || strings.TrimSpace(task) == "" {
		return text
	}
	return "The user sets a sustained goal: " + task + "\n\n" +
		"Call create_goal with the objective and a short ui_summary, then work on it. It stays active across " +
		"turns until you call update_goal (complete when done, block if you need the user, cancel if it is no longer wanted)."
}

// GoalContinueText asks the model to go on with the session's active goal.
func GoalContinueText(g *Goal) string {
	return "[Sustained goal] You have an active sustained goal that is not complete yet: " + g.Objective + "\n\n" +
		"Continue working on it now. When it is done, call update_goal with action=complete; " +
		"if you cannot go on without the user, call update_goal with action=block and say what you need."
}

// cmdGoal answers a /goal without a task; with one, the turn goes to the model.
func cmdGoal(_ *Commands, _ context.Context, _ protocol.StepInput, _ string) (string, error) {
	return "Usage: /goal <task> — the agent keeps working on it until it is done.", nil
}

// injectGoalContinue journals the prompt to go on with the active goal.
func (a journal) injectGoalContinue(ctx context.Context, in protocol.InjectInput) error {
	sess, err := a.load(ctx, in.SessionKey)
	if err != nil {
		return err
	}
	g := GoalOf(sess)
	if g == nil {
		return fmt.Errorf("session %s has no goal to continue", in.SessionKey)
	}
	msg := chat.Message{Role: chat.RoleUser, Content: GoalContinueText(g), Turn: in.Turn, EntryID: fmt.Sprintf("goal-continue-%d", in.Cycle)}
	if _, err := a.store.Append(ctx, in.SessionKey, msg); err != nil {
		return fmt.Errorf("journal the goal prompt: %w", err)
	}
	return nil
}
