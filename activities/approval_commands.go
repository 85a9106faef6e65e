package activities

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.temporal.io/api/serviceerror"

	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// Texts of the approval commands.
const (
	noApprovalWaitingText = "No approval request is waiting in this chat."
	approvalGoneText      = "The task that asked for %s has ended; nothing was run."
)

// cmdApprove answers "/approve [id] [always]".
func (c *Commands) cmdApprove(ctx context.Context, in protocol.StepInput, args string) (string, bool, error) {
	fields := strings.Fields(args)
	verdict := protocol.VerdictApprove
	if n := len(fields); n > 0 && strings.EqualFold(fields[n-1], "always") {
		verdict, fields = protocol.VerdictAlways, fields[:n-1]
	}
	if len(fields) > 1 {
		return "Usage: /approve [id] [always]", false, nil
	}
	return c.answerApproval(ctx, in, fields, verdict)
}

// cmdDeny answers "/deny [id] [reason]".
func (c *Commands) cmdDeny(ctx context.Context, in protocol.StepInput, args string) (string, bool, error) {
	return c.answerApproval(ctx, in, strings.Fields(args), protocol.VerdictDeny)
}

// answerApproval records the answer on the request (once: a second answer
// is told the first) and wakes the workflow that asked. fields[0] may be
// the id; without one, the chat's only waiting request is meant. answered
// reports that the asker got the answer.
func (c *Commands) answerApproval(ctx context.Context, in protocol.StepInput, fields []string, verdict string) (reply string, answered bool, err error) {
	var (
		target approvalRecord
		answer protocol.ApprovalAnswer
	)
	err = c.store.Update(ctx, in.SessionKey, func(s *session.Session) error {
		recs := approvalRecords(s)
		id, rest := pickApproval(recs, fields)
		r, ok := recs[id]
		switch {
		case id == "" && len(pendingIDs(recs)) == 0:
			reply = noApprovalWaitingText
			return nil
		case id == "":
			reply = fmt.Sprintf("Several requests wait: %s. Say which: %s <id>.", strings.Join(pendingIDs(recs), ", "), commandOf(verdict))
			return nil
		case !ok:
			reply = fmt.Sprintf("There is no approval request %q in this chat. %s", id, waitingLine(recs))
			return nil
		case r.Status != approvalPending:
			reply = fmt.Sprintf("Request %s was already answered: %s.", id, describeAnswer(r.Answer))
			return nil
		}
		answer = protocol.ApprovalAnswer{ID: id, Verdict: verdict, By: in.Message.Route.Channel + ":" + in.Message.Route.SenderID}
		if verdict == protocol.VerdictDeny {
			answer.Reason = strings.Join(rest, " ")
		}
		r.Status, r.Answer = approvalAnswered, &answer
		recs[id] = r
		if verdict == protocol.VerdictAlways {
			addAlwaysKey(s, r.Key)
		}
		target = r
		return putApprovalRecords(s, recs)
	})
	if err != nil || reply != "" {
		return reply, false, err
	}
	if c.client == nil {
		return "", false, errors.New("no Temporal client to wake the task that asked")
	}
	err = c.client.SignalWorkflow(ctx, target.WorkflowID, "", protocol.SignalApproval, answer)
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return fmt.Sprintf(approvalGoneText, target.Call()), false, nil
	}
	if err != nil {
		c.reopenApproval(ctx, in.SessionKey, target.ID) // a retry of the command answers it again
		return "", false, fmt.Errorf("wake %s for approval %s: %w", target.WorkflowID, target.ID, err)
	}
	switch verdict {
	case protocol.VerdictAlways:
		return fmt.Sprintf("Approved: %s — and %s for the rest of this conversation.", target.Call(), target.Key), true, nil
	case protocol.VerdictDeny:
		return fmt.Sprintf("Denied: %s.", target.Call()), true, nil
	}
	return fmt.Sprintf("Approved: %s.", target.Call()), true, nil
}

// pickApproval finds the request fields name: the first field when it is
// an id, else the only pending one. rest is what follows the id.
func pickApproval(recs map[string]approvalRecord, fields []string) (id string, rest []string) {
	if len(fields) > 0 {
		if _, ok := recs[fields[0]]; ok || looksLikeID(fields[0]) {
			return fields[0], fields[1:]
		}
	}
	if p := pendingIDs(recs); len(p) == 1 {
		return p[0], fields
	}
	return "", fields
}

// looksLikeID: ids are hex, 4 to 6 characters (a reason word is not).
func looksLikeID(s string) bool {
	if len(s) < 4 || len(s) > 6 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

func pendingIDs(recs map[string]approvalRecord) []string {
	var ids []string
	for id, r := range recs {
		if r.Status == approvalPending {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func waitingLine(recs map[string]approvalRecord) string {
	if p := pendingIDs(recs); len(p) > 0 {
		return "Waiting: " + strings.Join(p, ", ") + "."
	}
	return noApprovalWaitingText
}

func commandOf(verdict string) string {
	if verdict == protocol.VerdictDeny {
		return protocol.DenyCommand
	}
	return protocol.ApproveCommand
}

func describeAnswer(a *protocol.ApprovalAnswer) string {
	if a == nil {
		return "closed"
	}
	switch a.Verdict {
	case protocol.VerdictTimeout:
		return "nobody answered in time, so it was not run"
	case protocol.VerdictCancelled:
		return "the task was stopped, so it was not run"
	case protocol.VerdictDeny:
		return "denied by " + a.By
	}
	return "approved by " + a.By
}

// reopenApproval puts an answered request back to pending when its asker
// could not be told, so the answer can be given again.
func (c *Commands) reopenApproval(ctx context.Context, key, id string) {
	err := c.store.Update(ctx, key, func(s *session.Session) error {
		recs := approvalRecords(s)
		r, ok := recs[id]
		if !ok {
			return nil
		}
		r.Status, r.Answer = approvalPending, nil
		recs[id] = r
		return putApprovalRecords(s, recs)
	})
	if err != nil {
		c.log.Warn("reopening an approval request failed", "session", key, "id", id, "error", err)
	}
}
