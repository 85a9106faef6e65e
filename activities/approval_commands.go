package activities

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.temporal.io/api/serviceerror"

	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// Texts of the approval commands.
const (
	noApprovalWaitingText = "No approval request is waiting in this chat."
	approvalGoneText      = "The task that asked for %s has ended; nothing was run."
)

// cmdApprove answers "/approve [id] [always|rule]".
func (c *Commands) cmdApprove(ctx context.Context, in protocol.StepInput, args string) (string, bool, error) {
	fields := strings.Fields(args)
	verdict := protocol.VerdictApprove
	if n := len(fields); n > 0 {
		switch strings.ToLower(fields[n-1]) {
		case protocol.VerdictAlways:
			verdict, fields = protocol.VerdictAlways, fields[:n-1]
		case protocol.VerdictRule:
			verdict, fields = protocol.VerdictRule, fields[:n-1]
		}
	}
	if len(fields) > 1 {
		return "Usage: /approve [id] [always|rule]", false, nil
	}
	return c.answerApproval(ctx, in, fields, verdict)
}

// cmdDeny answers "/deny [id] [reason]".
func (c *Commands) cmdDeny(ctx context.Context, in protocol.StepInput, args string) (string, bool, error) {
	return c.answerApproval(ctx, in, strings.Fields(args), protocol.VerdictDeny)
}

// answerApproval records the answer on the request (once: a second answer
// is told the first) and wakes the workflow that asked with a proof it
// checks. Only a person answers: a message sealed for this session, from a
// chat the request was shown in or from the owner's CLI. fields[0] may be
// the id; without one, the chat's only waiting request is meant, if it was
// shown in this chat. answered reports that the asker got the answer.
func (c *Commands) answerApproval(ctx context.Context, in protocol.StepInput, fields []string, verdict string) (reply string, answered bool, err error) {
	by, why := c.vouch(in)
	if by == "" {
		c.refused(in, commandOf(verdict), why)
		return answerRefusedText, false, nil
	}
	route := in.Message.Route
	var (
		target approvalRecord
		answer protocol.ApprovalAnswer
	)
	err = c.store.Update(ctx, in.SessionKey, func(s *session.Session) error {
		recs := approvalRecords(s)
		id, rest := pickApproval(recs, fields)
		named := len(rest) < len(fields)
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
		case !named && !r.shownIn(in.SessionKey, route) && by == owner.ByOwner:
			reply = fmt.Sprintf("Request %s was asked in another chat: name it to answer from here (%s %s).", id, commandOf(verdict), id)
			return nil
		case !named && !r.shownIn(in.SessionKey, route):
			reply = noApprovalWaitingText // another chat's request is not this chat's to answer
			return nil
		case !r.mayAnswer(by, in.SessionKey, route):
			c.refused(in, commandOf(verdict)+" "+id, "sealed by "+by+" in a chat the request was not shown in")
			reply = answerRefusedText
			return nil
		case r.Status != approvalPending:
			reply = fmt.Sprintf("Request %s was already answered: %s.", id, describeAnswer(r.Answer))
			return nil
		case answeredBy(recs, in.Message.ID) != "":
			c.refused(in, commandOf(verdict)+" "+id, "the message already answered request "+answeredBy(recs, in.Message.ID))
			reply = answerRefusedText
			return nil
		case verdict == protocol.VerdictRule && (r.Rule == "" || r.Once):
			reply = fmt.Sprintf("Request %s offers no rule: %s %s, or %s %s always for this exact call.", id, protocol.ApproveCommand, id, protocol.ApproveCommand, id)
			return nil
		}
		if verdict == protocol.VerdictAlways && r.Once {
			verdict = protocol.VerdictApprove // the guard refuses it: approved this once, asked again next time
		}
		answer = protocol.ApprovalAnswer{ID: id, Verdict: verdict, By: route.Channel + ":" + route.SenderID, Message: in.Message.ID}
		switch verdict {
		case protocol.VerdictDeny:
			answer.Reason = strings.Join(rest, " ")
		case protocol.VerdictAlways:
			answer.Rule = r.Key
		case protocol.VerdictRule:
			answer.Rule = r.Rule
		}
		c.owner.ProveAnswer(&answer, r.WorkflowID, r.RunID)
		r.Status, r.Answer = approvalAnswered, &answer
		recs[id] = r
		allow(s, verdict, answer.Rule)
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
	return answeredText(target, answer), true, nil
}

// answeredText is the reply to an answer that reached the asker; it names the call.
func answeredText(target approvalRecord, answer protocol.ApprovalAnswer) string {
	switch {
	case answer.Verdict == protocol.VerdictDeny:
		return fmt.Sprintf("Denied: %s.", target.Call())
	case answer.Verdict == protocol.VerdictAlways:
		return fmt.Sprintf("Approved: %s — and this exact call from now on in this chat (/approvals lists it).", target.Call())
	case answer.Verdict == protocol.VerdictRule:
		return fmt.Sprintf("Approved: %s — and %s from now on in this chat (/approvals lists it).", target.Call(), protocol.RuleText(answer.Rule))
	case target.Once:
		return fmt.Sprintf("Approved: %s — this once; the exec guard refuses it, so it asks every time.", target.Call())
	}
	return fmt.Sprintf("Approved: %s.", target.Call())
}

// answeredBy is the request a message already answered, "" for none: a
// replayed message answers nothing twice.
func answeredBy(recs map[string]approvalRecord, messageID string) string {
	for id, r := range recs {
		if messageID != "" && r.Answer != nil && r.Answer.Message == messageID {
			return id
		}
	}
	return ""
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
