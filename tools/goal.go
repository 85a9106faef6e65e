package tools

import (
	"context"
	"encoding/json"
	"strings"
)

// GoalStore keeps a session's sustained goal; the durable layer implements
// it on the session journal.
type GoalStore interface {
	CreateGoal(ctx context.Context, env Env, objective, summary string) (string, error)
	UpdateGoal(ctx context.Context, env Env, action, objective, summary, reason string) (string, error)
}

const createGoalDescription = "Create the sustained goal of this conversation (only after the user set one with /goal). " +
	"While the goal is active you keep working on it across turns; end it with update_goal."

const createGoalParameters = `{
  "type": "object",
  "properties": {
    "objective": {"type": "string", "description": "What must be true when the goal is done, precisely"},
    "ui_summary": {"type": "string", "description": "A short summary shown to the user (a few words)"}
  },
  "required": ["objective", "ui_summary"]
}`

const updateGoalDescription = "End or change the active sustained goal: complete (done), cancel (no longer wanted), " +
	"block (you cannot go on without the user; give the reason), or replace (a new objective)."

const updateGoalParameters = `{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["complete", "cancel", "block", "replace"]},
    "objective": {"type": "string", "description": "replace: the new objective"},
    "ui_summary": {"type": "string", "description": "replace: a new short summary"},
    "reason": {"type": "string", "description": "Why (block: what you need from the user)"}
  },
  "required": ["action"]
}`

// CreateGoalTool is create_goal.
type CreateGoalTool struct{ store GoalStore }

func (CreateGoalTool) Name() string                { return "create_goal" }
func (CreateGoalTool) Description() string         { return createGoalDescription }
func (CreateGoalTool) Parameters() json.RawMessage { return json.RawMessage(createGoalParameters) }
func (CreateGoalTool) Flags() Flags                { return Flags{} }

func (t CreateGoalTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	objective := strings.TrimSpace(StringArg(args, "objective"))
	if objective == "" {
		return ErrorResult("Error: Invalid parameters for tool 'create_goal': objective is empty")
	}
	msg, err := t.store.CreateGoal(ctx, env, objective, strings.TrimSpace(StringArg(args, "ui_summary")))
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	return TextResult(msg)
}

// UpdateGoalTool is update_goal.
type UpdateGoalTool struct{ store GoalStore }

func (UpdateGoalTool) Name() string                { return "update_goal" }
func (UpdateGoalTool) Description() string         { return updateGoalDescription }
func (UpdateGoalTool) Parameters() json.RawMessage { return json.RawMessage(updateGoalParameters) }
func (UpdateGoalTool) Flags() Flags                { return Flags{} }

func (t UpdateGoalTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	action := StringArg(args, "action")
	objective := strings.TrimSpace(StringArg(args, "objective"))
	if action == "replace" && objective == "" {
		return ErrorResult("Error: Invalid parameters for tool 'update_goal': replace needs the new objective")
	}
	msg, err := t.store.UpdateGoal(ctx, env, action, objective, strings.TrimSpace(StringArg(args, "ui_summary")), strings.TrimSpace(StringArg(args, "reason")))
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	return TextResult(msg)
}
