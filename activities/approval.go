package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// Approval requests live in the metadata of the chat's session that is
// asked: one record per request, answered at most once, whoever asked (the
// chat's turn, a subagent, a scheduled turn). The record is the truth; the
// signal to the asker only wakes it.
const approvalsKey = "approvals"

// Status of a request record.
const (
	approvalPending  = "pending"
	approvalAnswered = "answered"
)

// approvalRecord is one request in the session's metadata.
type approvalRecord struct {
	protocol.ApprovalRequest
	WorkflowID string `json:"workflow_id"`
	// RunID is the asking run, which the answer's proof names.
	RunID string `json:"run_id,omitempty"`
	// Shown are the chats the request was shown in: a chat answers only from one of them.
	Shown  []protocol.Route         `json:"shown,omitempty"`
	Status string                   `json:"status"`
	Answer *protocol.ApprovalAnswer `json:"answer,omitempty"`
}

// Approvals records approval requests, checks their answers' proofs and
// closes the ones nobody answered.
type Approvals struct {
	journal
	owner owner.Key
	log   *slog.Logger
}

// ApprovalAsk records a request in the origin session, once per call: a
// retry finds the same record. A call the chat allowed from now on (its
// exact key, or its rule) runs without asking, unless the guard refuses it.
func (a *Approvals) ApprovalAsk(ctx context.Context, in protocol.ApprovalAskInput) (protocol.ApprovalAskResult, error) {
	var res protocol.ApprovalAskResult
	err := a.store.Update(ctx, in.OriginKey, func(s *session.Session) error {
		if !in.Once && allowedOf(s).covers(in.Key, in.Rule) {
			res.Allowed = true
			return nil
		}
		recs := approvalRecords(s)
		id := in.ID
		for n := 0; ; n++ {
			r, taken := recs[id]
			if !taken {
				break
			}
			if r.WorkflowID == in.WorkflowID && r.Tool == in.Tool && r.Args == in.Args {
				res.Request = r.ApprovalRequest // a retry of this ask
				return nil
			}
			id = fmt.Sprintf("%s%d", in.ID, n+2) // another request has the id: take the next
		}
		rec := approvalRecord{
			ApprovalRequest: protocol.ApprovalRequest{ID: id, Tool: in.Tool, Args: in.Args, Reason: in.Reason, Key: in.Key,
				Rule: in.Rule, Once: in.Once, AskedAt: time.Now().UTC()},
			WorkflowID: in.WorkflowID, RunID: in.RunID, Shown: chatsOf(in.Shown), Status: approvalPending,
		}
		recs[id] = rec
		res.Request = rec.ApprovalRequest
		return putApprovalRecords(s, recs)
	})
	if err != nil {
		return res, fmt.Errorf("record approval request in %s: %w", in.OriginKey, err)
	}
	return res, nil
}

// ApprovalClose ends a request nobody answered in time (or whose task was
// stopped). If an answer came
// first (it raced the timer), that answer stands and is returned.
func (a *Approvals) ApprovalClose(ctx context.Context, in protocol.ApprovalCloseInput) (protocol.ApprovalAnswer, error) {
	answer := protocol.ApprovalAnswer{ID: in.ID, Verdict: in.Verdict}
	err := a.store.Update(ctx, in.OriginKey, func(s *session.Session) error {
		recs := approvalRecords(s)
		r, ok := recs[in.ID]
		if !ok {
			return nil
		}
		if r.Status == approvalAnswered && r.Answer != nil {
			answer = *r.Answer
			return nil
		}
		r.Status, r.Answer = approvalAnswered, &answer
		recs[in.ID] = r
		return putApprovalRecords(s, recs)
	})
	if err != nil {
		return answer, fmt.Errorf("close approval request %s in %s: %w", in.ID, in.OriginKey, err)
	}
	return answer, nil
}

// ApprovalVerify checks an answer's proof for the run that waits on it: a
// signal anyone sent without the owner key is not an answer.
func (a *Approvals) ApprovalVerify(_ context.Context, in protocol.ApprovalVerifyInput) (bool, error) {
	if a.owner.AnswerProven(in.Answer, in.WorkflowID, in.RunID) {
		return true, nil
	}
	a.log.Warn("an approval answer without a valid proof was ignored; the call still waits",
		"workflow", in.WorkflowID, "run", in.RunID, "id", in.Answer.ID, "verdict", in.Answer.Verdict, "by", in.Answer.By,
		"proof", proofState(in.Answer.Proof))
	return false, nil
}

func proofState(proof string) string {
	if proof == "" {
		return "none"
	}
	return "invalid"
}

// chatsOf keeps of each route the chat (channel and chat id), once each.
func chatsOf(routes []protocol.Route) []protocol.Route {
	var out []protocol.Route
	for _, r := range routes {
		c := protocol.Route{Channel: r.Channel, ChatID: r.ChatID}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func approvalRecords(s *session.Session) map[string]approvalRecord {
	recs := map[string]approvalRecord{}
	if raw, ok := s.Metadata[approvalsKey]; ok {
		if b, err := json.Marshal(raw); err == nil {
			_ = json.Unmarshal(b, &recs)
		}
	}
	return recs
}

// keepAnswered bounds the answered records a session keeps.
const keepAnswered = 50

func putApprovalRecords(s *session.Session, recs map[string]approvalRecord) error {
	var answered []approvalRecord
	for _, r := range recs {
		if r.Status == approvalAnswered {
			answered = append(answered, r)
		}
	}
	if len(answered) > keepAnswered {
		oldest := answered[0]
		for _, r := range answered {
			if r.AskedAt.Before(oldest.AskedAt) {
				oldest = r
			}
		}
		delete(recs, oldest.ID)
	}
	b, err := json.Marshal(recs)
	if err != nil {
		return fmt.Errorf("encode approval requests: %w", err)
	}
	var generic map[string]any
	if err := json.Unmarshal(b, &generic); err != nil {
		return fmt.Errorf("encode approval requests: %w", err)
	}
	if s.Metadata == nil {
		s.Metadata = map[string]any{}
	}
	s.Metadata[approvalsKey] = generic
	return nil
}
