package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/workers"
)

// cliSession is one terminal talking to one session.
type cliSession struct {
	app        *app
	r          *runtimeEnv
	cli        *channels.CLI
	thin       atomic.Bool // the gateway's workers run the turns; this process only delivers
	queue      string
	route      protocol.Route
	key        string
	log        *slog.Logger
	opts       workers.Options
	interrupts chan os.Signal
	// input reads the terminal's lines in interactive mode; nil with -m.
	input *prompter
	// hints are the tool lines of the turn a thin client follows.
	hints hintLines
}

// errStopped: the user stopped the turn with Ctrl-C.
var errStopped = errors.New("stopped")

// errQuit: a second Ctrl-C while stopping.
var errQuit = errors.New("interrupted")

// message is text as this terminal says it: sealed with the owner key, as
// the owner (an approval from here counts for any chat's request it names).
func (s *cliSession) message(text string) protocol.Inbound {
	msg := protocol.Inbound{ID: randomID(), SessionKey: s.key, Route: s.route, Content: text, SentAt: time.Now()}
	s.r.workers.Owner.Seal(&msg, owner.ByOwner)
	return msg
}

// send publishes one message and waits for its turn to end.
func (s *cliSession) send(ctx context.Context, text string) (channels.Reply, error) {
	msg := s.message(text)
	stopReply, err := s.r.bus.Publish(ctx, msg)
	if err != nil {
		return channels.Reply{}, err
	}
	if stopReply != "" {
		fmt.Fprintln(s.cli.Out, stopReply)
		return channels.Reply{Text: stopReply}, nil
	}
	return s.wait(ctx, msg)
}

// wait follows the session's turn until it ends: it shows progress (a thin
// client asks the turn for it), prints the reply when it comes, and turns
// the first Ctrl-C into /stop and the second into leaving.
func (s *cliSession) wait(ctx context.Context, msg protocol.Inbound) (channels.Reply, error) {
	id := s.r.cfg.Instance().TurnWorkflowID(s.key)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan error, 1)
	go func() { ended <- s.r.conn.Client.GetWorkflow(wctx, id, "").Get(wctx, nil) }()
	var progress <-chan time.Time
	s.hints.follow(msg.ID)
	defer s.hints.stop()
	s.cli.SetBeforeReply(s.hintsBeforeReply)
	if s.thin.Load() {
		t := time.NewTicker(300 * time.Millisecond)
		defer t.Stop()
		progress = t.C
		go s.ensureWorker(wctx)
	}
	stopping := false
	var last *channels.Reply   // a message tool send that stood in for the reply
	var answer <-chan lineRead // the approval prompt's line, while one is asked
	var asked protocol.ApprovalRequest
	for {
		select {
		case reply := <-s.cli.Replies():
			if reply.Kind == protocol.ReplyApproval && reply.Approval != nil {
				asked, answer = *reply.Approval, s.askApproval(*reply.Approval)
				continue // the turn waits for a person; its reply comes later
			}
			if reply.Kind == protocol.ReplyMessage && reply.SessionKey == s.key {
				last = &reply
			}
			if msg.ID != "" && slices.Contains(reply.MessageIDs, msg.ID) {
				// Without a gateway the run's last workflow task needs this
				// process's worker; with one, a CLI started right after this
				// one would otherwise find the run still open and wait for it.
				wait := 10 * time.Second
				if s.thin.Load() {
					wait = 2 * time.Second
				}
				s.awaitClose(ctx, ended, wait)
				return reply, nil
			}
		case r := <-answer:
			answer = nil
			s.input.took()
			stopping = stopping || errors.Is(r.err, errInterrupted)
			if err := s.answerApproval(ctx, r, asked); err != nil {
				fmt.Fprintln(s.app.stderr, "approval:", oneLine(err.Error()))
			}
		case err := <-ended:
			return s.ended(ctx, msg, err, last, stopping)
		case <-progress:
			s.showHints(wctx, id)
		case <-s.interrupts:
			if stopping {
				fmt.Fprintln(s.cli.Out)
				return channels.Reply{}, errQuit
			}
			stopping = true
			fmt.Fprintln(s.cli.Out, "\n[stopping… press Ctrl-C again to quit]")
			if _, err := s.r.bus.Stop(ctx, s.key); err != nil {
				fmt.Fprintln(s.app.stderr, "stop:", oneLine(err.Error()))
			}
		case <-ctx.Done():
			return channels.Reply{}, ctx.Err()
		}
	}
}

// ended handles the end of the turn's run: its reply is at most a moment
// behind; a stopped turn says so; a turn whose reply the message tool gave ends quietly.
func (s *cliSession) ended(ctx context.Context, msg protocol.Inbound, err error, last *channels.Reply, stopping bool) (channels.Reply, error) {
	if err != nil && ctx.Err() == nil {
		if temporal.IsCanceledError(err) || stopping {
			s.cli.EndTurn()
			fmt.Fprintln(s.cli.Out, "Stopped 1 task(s).")
			return channels.Reply{Text: "Stopped 1 task(s)."}, errStopped
		}
		return channels.Reply{}, fmt.Errorf("turn %s failed: %w", s.r.cfg.Instance().TurnWorkflowID(s.key), err)
	}
	if msg.ID == "" {
		return channels.Reply{}, nil // catching up: the reply went where it was going
	}
	timeout := time.After(2 * time.Second)
	for {
		select {
		case reply := <-s.cli.Replies():
			if slices.Contains(reply.MessageIDs, msg.ID) {
				return reply, nil
			}
		case <-timeout:
			if last != nil {
				s.cli.EndTurn()
				return *last, nil // the message tool answered; the final reply was not sent twice
			}
			return channels.Reply{}, errors.New("the turn finished but its reply was not delivered")
		}
	}
}

// awaitClose stays until the run closes, at most wait.
func (s *cliSession) awaitClose(ctx context.Context, ended <-chan error, wait time.Duration) {
	select {
	case <-ended:
	case <-time.After(wait):
	case <-ctx.Done():
	}
}

// showHints asks the running turn for its tool progress and draws the new lines.
func (s *cliSession) showHints(ctx context.Context, id string) {
	asked := s.hints.ask()
	if st, ok := s.turnState(ctx, id); ok {
		s.hints.draw(s.cli, asked, st.Hints)
	}
}

// hintsBeforeReply runs before the CLI draws a reply. The reply is
// delivered on another goroutine than the poll, so a poll landing just
// after the answer would draw a hint behind it: in a thin client the
// turn's lines not drawn yet are drawn now, and none after its answer.
func (s *cliSession) hintsBeforeReply(ctx context.Context, r channels.Reply) {
	if s.thin.Load() && s.hints.isFollowing() {
		s.showHints(ctx, s.r.cfg.Instance().TurnWorkflowID(s.key))
	}
	s.hints.answered(r)
}

// turnState asks the running turn for its state, for at most 2 s.
func (s *cliSession) turnState(ctx context.Context, id string) (protocol.TurnState, bool) {
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var st protocol.TurnState
	v, err := s.r.conn.Client.QueryWorkflow(qctx, id, "", protocol.QueryState)
	if err != nil {
		s.log.Debug("state query of the turn failed", "workflow", id, "error", err)
		return st, false
	}
	return st, v.Get(&st) == nil
}

// ensureWorker starts turn and model workers here when the worker that
// looked alive does not answer (it stopped within the last minute).
func (s *cliSession) ensureWorker(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := s.r.conn.Client.QueryWorkflow(qctx, s.r.cfg.Instance().TurnWorkflowID(s.key), "", protocol.QueryState)
	if err == nil || ctx.Err() != nil {
		return
	}
	if !s.thin.CompareAndSwap(true, false) {
		return
	}
	s.log.Warn("no worker answered the turn; running turns in this process", "error", err)
	set, err := workers.Start(s.r.conn.Client, workers.Options{
		Config: s.r.cfg, Streams: s.r.hub, Log: s.log, Turns: true, Models: true, Workspace: true, Channels: s.opts.Channels, Identity: s.opts.Identity, Namespace: s.r.conn.Namespace, BuildID: version,
		Deployment: os.Getenv(workers.DeploymentEnv),
	})
	if err != nil {
		s.log.Error("starting workers failed", "error", err)
		return
	}
	s.r.addWorkers(set)
	s.r.bus.SetLocalWorker(true)
}
