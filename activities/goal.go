package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
)

func goalIsActive(s *session.Session) bool {
	g := session.GoalOf(s)
	return g != nil && g.Status == session.GoalActive
}

// GoalStore keeps goals in the session journal's metadata (tools.GoalStore).
type GoalStore struct{ Store session.Store }

// CreateGoal implements tools.GoalStore.
func (g GoalStore) CreateGoal(ctx context.Context, env tools.Env, objective, summary string) (string, error) {
	var msg string
	err := g.Store.Update(ctx, env.SessionKey, func(s *session.Session) error {
		if cur := session.GoalOf(s); cur != nil && cur.Status == session.GoalActive {
			if cur.Objective == objective {
				msg = "Goal created: " + cur.Label() // a retried call
				return nil
			}
			return fmt.Errorf("a goal is already active (%s); end or replace it with update_goal", cur.Label())
		}
		at := now()
		g := &session.Goal{Objective: objective, Summary: summary, Status: session.GoalActive, Since: at, Updated: at, Turn: env.Turn}
		s.Metadata[session.GoalKey] = g
		msg = "Goal created: " + g.Label() +
			". Keep working until it is done, then call update_goal with action=complete."
		return nil
	})
	return msg, err
}

// UpdateGoal implements tools.GoalStore.
func (g GoalStore) UpdateGoal(ctx context.Context, env tools.Env, action, objective, summary, reason string) (string, error) {
	var msg string
	err := g.Store.Update(ctx, env.SessionKey, func(s *session.Session) error {
		cur := session.GoalOf(s)
		if cur == nil || cur.Status != session.GoalActive {
			return errors.New("there is no active goal")
		}
		next := *cur
		next.Updated, next.Reason, next.Turn = now(), reason, env.Turn
		switch action {
		case "complete":
			next.Status, msg = session.GoalComplete, "Goal completed: "+cur.Label()+"."
		case "cancel":
			next.Status, msg = session.GoalCancelled, "Goal cancelled: "+cur.Label()+"."
		case "block":
			next.Status, msg = session.GoalBlocked, "Goal blocked: "+cur.Label()+". Tell the user what you need."
		case "replace":
			next.Objective, next.Summary = objective, summary
			msg = "Goal replaced: " + next.Label() + "."
		default:
			return fmt.Errorf("unknown action %q (complete, cancel, block or replace)", action)
		}
		s.Metadata[session.GoalKey] = &next
		return nil
	})
	return msg, err
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
func GoalContinueText(g *session.Goal) string {
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
	g := session.GoalOf(sess)
	if g == nil {
		return fmt.Errorf("session %s has no goal to continue", in.SessionKey)
	}
	msg := chat.Message{Role: chat.RoleUser, Content: GoalContinueText(g), Turn: in.Turn, EntryID: fmt.Sprintf("goal-continue-%d", in.Cycle)}
	if _, err := a.store.Append(ctx, in.SessionKey, msg); err != nil {
		return fmt.Errorf("journal the goal prompt: %w", err)
	}
	return nil
}
