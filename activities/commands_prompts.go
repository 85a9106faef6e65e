package activities

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
)

// workspacePromptCommand is /dream-prompt and /evaluator-prompt: show
// whether the workspace overrides one of nanobot's prompts, or (init)
// write the default there to edit. The texts are nanobot's.
type workspacePromptCommand struct {
	name, what string // "dream", "Dream memory instructions"
	initNote   string // what init's answer adds
}

var (
	dreamPromptCommand = workspacePromptCommand{name: "dream", what: "Dream memory instructions",
		initNote: "Edit that file to teach Dream how to organize memory. " +
			"This fully replaces nanobot's default Dream guide for this workspace. " +
			"Delete or empty it to return to nanobot's default."}
	evaluatorPromptCommand = workspacePromptCommand{name: "evaluator", what: "Heartbeat evaluator prompt",
		initNote: "Edit that file to control when the heartbeat notification gate speaks. " +
			"It must still instruct the model to call the `evaluate_notification` tool, " +
			"otherwise the gate fails closed and stays silent. " +
			"Delete or empty it to return to nanobot's default."}
)

func (w workspacePromptCommand) run(workspace, def, args string) (string, error) {
	path := prompt.WorkspacePromptFile(workspace, w.name)
	shown := filepath.ToSlash(filepath.Join("prompts", w.name+".md"))
	switch args = strings.ToLower(strings.TrimSpace(args)); {
	case args == "init":
		created, err := prompt.InitWorkspacePrompt(path, def)
		if err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		if !created {
			return fmt.Sprintf("%s already exist at `%s`.\n\nEdit that file, or delete/empty it to return to nanobot's default.", w.what, shown), nil
		}
		return fmt.Sprintf("Created %s at `%s`.\n\n%s", lowerFirst(w.what), shown, w.initNote), nil
	case args != "":
		return fmt.Sprintf("Usage: /%s-prompt [init]", w.name), nil
	}
	if _, custom := prompt.WorkspacePrompt(path, def); custom {
		return fmt.Sprintf("%s: custom for this workspace\n\n- Path: `%s`\n- Delete or empty this file to return to nanobot's default.", w.what, shown), nil
	}
	return fmt.Sprintf("%s: nanobot default\n\n- Editable file: `%s`\n- Run `/%s-prompt init` to create an editable copy.", w.what, shown, w.name), nil
}

// lowerFirst: nanobot's "Created Dream memory instructions" keeps Dream's
// capital, "Created heartbeat evaluator prompt" does not.
func lowerFirst(s string) string {
	if strings.HasPrefix(s, "Heartbeat") {
		return "heartbeat" + strings.TrimPrefix(s, "Heartbeat")
	}
	return s
}

func (c *Commands) cmdDreamPrompt(_ context.Context, _ protocol.StepInput, args string) (string, error) {
	return dreamPromptCommand.run(c.workspace, DreamSystemPrompt, args)
}

func (c *Commands) cmdEvaluatorPrompt(_ context.Context, _ protocol.StepInput, args string) (string, error) {
	return evaluatorPromptCommand.run(c.workspace, HeartbeatDecisionPrompt, args)
}
