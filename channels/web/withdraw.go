package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Why a queued message could not be withdrawn.
var (
	// ErrTaken: the running turn already read it (injected): it will be answered.
	ErrTaken = errors.New("the running turn has already taken it in: it will be answered")
	// ErrNotQueued: nothing waits under that ID (answered, withdrawn, or no turn runs).
	ErrNotQueued = errors.New("it is not queued (already answered or withdrawn)")
)

// Withdrawer takes a queued message back from a session's running turn (TemporalTurns does).
type Withdrawer interface {
	Withdraw(ctx context.Context, sessionKey, messageID string) (protocol.Withdrawn, error)
}

// Withdraw implements Withdrawer with the turn workflow's withdraw update.
func (t TemporalTurns) Withdraw(ctx context.Context, sessionKey, messageID string) (protocol.Withdrawn, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var got protocol.Withdrawn
	h, err := t.Client.UpdateWorkflow(ctx, sdkclient.UpdateWorkflowOptions{
		WorkflowID: t.Instance.TurnWorkflowID(sessionKey), UpdateName: protocol.UpdateWithdraw,
		Args: []any{messageID}, WaitForStage: sdkclient.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, &got)
	}
	var app *temporal.ApplicationError
	var notFound *serviceerror.NotFound
	switch {
	case err == nil:
		return got, nil
	case errors.As(err, &app) && app.Type() == protocol.ErrWithdrawTaken:
		return got, ErrTaken
	case errors.As(err, &app) && app.Type() == protocol.ErrWithdrawUnknown, errors.As(err, &notFound):
		return got, ErrNotQueued
	}
	return got, fmt.Errorf("withdraw %s from the turn of %s: %w", messageID, sessionKey, err)
}

// withdrawRequest is the body of /api/withdraw.
type withdrawRequest struct {
	Chat string `json:"chat"`
	ID   string `json:"id"`
}

// withdraw answers POST /api/withdraw: a message of the chat's that waits
// behind its running turn is taken back, never to be answered.
func (c *Channel) withdraw(w http.ResponseWriter, r *http.Request) {
	var req withdrawRequest
	if !readRequest(w, r, &req, `{"chat", "id"}`) {
		return
	}
	chatID, ok := chatParam(w, req.Chat)
	if !ok {
		return
	}
	if !chatIDs.MatchString(req.ID) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("message id %q: want the id /api/send answered", req.ID))
		return
	}
	c.mu.Lock()
	wd, _ := c.turns.(Withdrawer)
	c.mu.Unlock()
	if wd == nil {
		writeError(w, http.StatusServiceUnavailable, "this gateway does not reach Temporal")
		return
	}
	key := protocol.SessionKey(Name, chatID)
	got, err := wd.Withdraw(r.Context(), key, req.ID)
	switch {
	case errors.Is(err, ErrTaken):
		writeError(w, http.StatusConflict, "message "+req.ID+" cannot be withdrawn: "+err.Error())
	case errors.Is(err, ErrNotQueued):
		writeError(w, http.StatusNotFound, "message "+req.ID+" cannot be withdrawn: "+err.Error())
	case err != nil:
		c.log.Error("withdrawing a queued message failed", "session", key, "message", req.ID, "error", err)
		writeError(w, http.StatusBadGateway, "could not withdraw the message: "+err.Error())
	default:
		c.log.Info("queued message withdrawn by the user", "session", key, "message", got.ID, "text", got.Preview)
		writeJSON(w, http.StatusOK, map[string]string{"withdrawn": got.ID, "preview": got.Preview})
	}
}
