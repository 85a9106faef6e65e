package activities

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/usage"
)

// EvaluateNotificationTool is the virtual tool the heartbeat's decision must call.
const EvaluateNotificationTool = "evaluate_notification"

// evaluateNotification is offered alone; it is never run, only read.
var evaluateNotification = chat.ToolDefinition{
	Name:        EvaluateNotificationTool,
	Description: "Decide whether the user should be notified about this background task result.",
	Parameters: json.RawMessage(`{"type":"object","properties":{` +
		`"should_notify":{"type":"boolean","description":"true = the result has actionable or important information the user should see; false = routine or empty, safe to suppress"},` +
		`"reason":{"type":"string","description":"One-sentence reason for the decision"}},` +
		`"required":["should_notify","reason"]}`),
}

// HeartbeatDecisionPrompt is the system prompt of the decision (nanobot's evaluator).
const HeartbeatDecisionPrompt = "You are a notification gate for a background agent. " +
	"You are given the original task and the agent's response. " +
	"Call the evaluate_notification tool to decide whether the user should be notified.\n\n" +
	"Notify when the response contains actionable information, errors, completed deliverables, " +
	"or anything the user explicitly asked to be reminded about.\n\n" +
	"Suppress when the response is a routine status check with nothing new, " +
	"a confirmation that everything is normal, or essentially empty."

// heartbeatDecisionEntry names the decision's model call in the usage file.
const heartbeatDecisionEntry = "heartbeat-decision"

// HeartbeatDecide picks the chat to notify and asks the model, at
// temperature 0 with only evaluate_notification, whether the heartbeat
// turn's reply is worth telling it. No chat, no reply, no tool call or bad
// arguments all mean "do not notify" (fail closed); a provider failure is
// the activity's error, which the workflow also reads as "do not notify".
func (a *Heartbeat) HeartbeatDecide(ctx context.Context, in protocol.HeartbeatDecideInput) (protocol.HeartbeatDecision, error) {
	no := func(reason string) (protocol.HeartbeatDecision, error) {
		a.log.Info("heartbeat: nobody is told", "reason", reason)
		return protocol.HeartbeatDecision{Reason: reason}, nil
	}
	sess, err := a.load(ctx, in.SessionKey)
	if err != nil {
		return protocol.HeartbeatDecision{}, err
	}
	reply, ok := heartbeatReply(sess, in.Turn)
	if !ok {
		return no("the heartbeat turn left no reply")
	}
	route, err := a.heartbeatTarget()
	if err != nil {
		return protocol.HeartbeatDecision{}, err
	}
	if route == nil {
		return no("no chat on an enabled channel to notify")
	}
	model, err := a.models.Model(in.Settings.Model)
	if err != nil {
		return no("no model for the decision: " + err.Error())
	}
	zero := 0.0
	req := providers.Request{
		Model: model.APIModel, Temperature: &zero, MaxTokens: 256,
		Tools: []chat.ToolDefinition{evaluateNotification}, ToolChoice: EvaluateNotificationTool,
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Content: a.evaluatorPrompt()},
			{Role: chat.RoleUser, Content: "## Original task\n" + in.Tasks + "\n\n## Agent response\n" + reply.Content},
		},
	}
	resp, err := model.Provider.Chat(ctx, req, nil)
	var pe *providers.Error
	if err != nil && errors.As(err, &pe) && pe.Status == 400 {
		// Some models refuse a forced tool choice (a bad request): ask once more leaving the choice to the model.
		a.log.Warn("heartbeat: the forced decision was refused; asking without forcing", "error", err)
		req.ToolChoice = ""
		resp, err = model.Provider.Chat(ctx, req, nil)
	}
	if err != nil {
		return protocol.HeartbeatDecision{}, modelError(err)
	}
	a.recordDecisionUsage(in, req, resp)
	notify, reason, ok := parseDecision(resp.ToolCalls)
	if !ok {
		return no("the decision did not call evaluate_notification with should_notify")
	}
	a.log.Info("heartbeat decision", "notify", notify, "reason", reason, "route", route.String())
	return protocol.HeartbeatDecision{
		Notify: notify, Reason: reason, Route: route,
		EntryID: reply.EntryID, Text: chat.Preview(reply.Content, protocol.PreviewBytes),
	}, nil
}

// parseDecision reads the first evaluate_notification call; ok is false when
// there is none or should_notify is missing or not a boolean.
func parseDecision(calls []chat.ToolCall) (notify bool, reason string, ok bool) {
	for _, c := range calls {
		if c.Function.Name != EvaluateNotificationTool {
			continue
		}
		var args struct {
			ShouldNotify *bool  `json:"should_notify"`
			Reason       string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil || args.ShouldNotify == nil {
			return false, "", false
		}
		return *args.ShouldNotify, args.Reason, true
	}
	return false, "", false
}

func (a *Heartbeat) recordDecisionUsage(in protocol.HeartbeatDecideInput, req providers.Request, resp *providers.Response) {
	a.usage.add(sideCallUsage(usage.Record{Session: in.SessionKey, Turn: in.Turn, Call: heartbeatDecisionEntry, Model: in.Settings.Model, Kind: usage.TurnKind(protocol.HeartbeatTurn)}, req, resp))
}

// evaluatorPrompt is the workspace's prompts/evaluator.md when it has
// text (/evaluator-prompt), else nanobot's. It is read where the decision
// runs: on a host without the workspace that is the default.
func (a *Heartbeat) evaluatorPrompt() string {
	text, _ := prompt.WorkspacePrompt(prompt.WorkspacePromptFile(a.workspace, "evaluator"), HeartbeatDecisionPrompt)
	return text
}
