package tools

import (
	"context"
	"encoding/json"
)

const spawnDescription = "Spawn a subagent to handle a task in the background. Use this for complex or " +
	"time-consuming tasks that can run independently. The subagent has the file, shell and web tools, " +
	"works in its own conversation, and reports back here when done. With wait=true you get its result " +
	"as this tool's result instead."

const spawnParameters = `{
  "type": "object",
  "properties": {
    "task": {"type": "string", "description": "The task for the subagent to complete, with everything it needs to know"},
    "label": {"type": "string", "description": "Optional short label for the task (for display)"},
    "wait": {"type": "boolean", "description": "Optional: wait for the result instead of running in the background"}
  },
  "required": ["task"]
}`

// SpawnTool is the spawn built-in. A subagent is a child workflow, which only
// workflow code can start: the turn runs spawn calls itself, so this tool
// only describes them to the model.
type SpawnTool struct{}

func (SpawnTool) Name() string                { return "spawn" }
func (SpawnTool) Description() string         { return spawnDescription }
func (SpawnTool) Parameters() json.RawMessage { return json.RawMessage(spawnParameters) }
func (SpawnTool) Flags() Flags                { return Flags{SideEffects: true} }

func (SpawnTool) Run(context.Context, Env, map[string]any) Result {
	return ErrorResult("Error: spawn is not available in this context")
}
