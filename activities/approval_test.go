package activities

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/protocol"
)

// signals is a Temporal client that records the signals it is asked to send.
type signals struct {
	client.Client
	mu   sync.Mutex
	sent []protocol.ApprovalAnswer
	to   []string
	err  error
}

func (s *signals) SignalWorkflow(_ context.Context, workflowID, _, name string, arg any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if name != protocol.SignalApproval {
		return errors.New("unexpected signal " + name)
	}
	s.sent, s.to = append(s.sent, arg.(protocol.ApprovalAnswer)), append(s.to, workflowID)
	return nil
}

// approvalRig is the approval activities with an owner key, a log to read
// and a client that records signals.
type approvalRig struct {
	set *Set
	sig *signals
	key owner.Key
	log *strings.Builder
}

func newApprovalRig(t *testing.T) *approvalRig {
	t.Helper()
	a := newActivities(t, nil)
	sig := &signals{}
	key, err := owner.NewKey()
	require.NoError(t, err)
	var log strings.Builder
	a.Client, a.Owner, a.Log = sig, key, slog.New(slog.NewTextHandler(&syncWriter{w: &log}, nil))
	return &approvalRig{set: a.set(), sig: sig, key: key, log: &log}
}

// syncWriter lets concurrent activities share one log.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// The chats of these tests: the session cli:t is the chat cli/t.
var (
	originChat = protocol.Route{Channel: "cli", ChatID: "t", SenderID: "ann"}
	ownerCLI   = protocol.Route{Channel: "cli", ChatID: "t", SenderID: "user", Queue: "nanobot-cli-1"}
)

func (r *approvalRig) ask(t *testing.T, id, tool, args string) protocol.ApprovalAskResult {
	t.Helper()
	return r.askIn(t, protocol.ApprovalAskInput{OriginKey: "cli:t", ID: id, Tool: tool, Args: args, Key: tool + " " + args})
}

// askIn records a request as the workflow turn/cli:t, run r1, asks it: shown in the session's chat.
func (r *approvalRig) askIn(t *testing.T, in protocol.ApprovalAskInput) protocol.ApprovalAskResult {
	t.Helper()
	in.WorkflowID, in.RunID, in.Reason = "turn/"+in.OriginKey, "r1", "risky"
	if in.Shown == nil {
		ch, chatID, err := protocol.SplitSessionKey(in.OriginKey)
		require.NoError(t, err)
		in.Shown = []protocol.Route{{Channel: ch, ChatID: chatID, SenderID: "who-asked"}}
	}
	res, err := r.set.Approvals.ApprovalAsk(context.Background(), in)
	require.NoError(t, err)
	return res
}

// said is a message in session key from route, sealed as by ("" = unsealed).
func (r *approvalRig) said(key string, route protocol.Route, by, turn, text string) protocol.StepInput {
	in := step(turn, text)
	in.SessionKey = key
	in.Message = protocol.Inbound{ID: "msg-" + turn, SessionKey: key, Route: route, Content: text}
	if by != "" {
		r.key.Seal(&in.Message, by)
	}
	return in
}

func (r *approvalRig) run(t *testing.T, in protocol.StepInput) protocol.CommandResult {
	t.Helper()
	res, err := r.set.Commands.Command(context.Background(), in)
	require.NoError(t, err)
	return res
}

// command is a message from the session's own chat, admitted there.
func (r *approvalRig) command(t *testing.T, turn, text string) protocol.CommandResult {
	t.Helper()
	return r.run(t, r.said("cli:t", originChat, owner.ByChat, turn, text))
}

func TestApproveWakesTheAskerOnce(t *testing.T) {
	r := newApprovalRig(t)
	sig := r.sig
	first := r.ask(t, "a1b2", "exec", "rm -rf build/")
	require.Equal(t, first.Request, r.ask(t, "a1b2", "exec", "rm -rf build/").Request, "a retried ask finds its record")
	other := r.ask(t, "a1b2", "exec", "git push")
	require.NotEqual(t, "a1b2", other.Request.ID, "another call with the same id gets its own")

	res := r.command(t, "t1", "/approve a1b2")
	require.True(t, res.ApprovalAnswered)
	require.Equal(t, "Approved: exec rm -rf build/.", res.Reply)
	require.Equal(t, []string{"turn/cli:t"}, sig.to)
	require.Equal(t, protocol.VerdictApprove, sig.sent[0].Verdict)
	require.Equal(t, "cli:ann", sig.sent[0].By)
	require.True(t, r.key.AnswerProven(sig.sent[0], "turn/cli:t", "r1"), "the signal carries a proof for the asking run")

	again := r.command(t, "t2", "/approve a1b2")
	require.False(t, again.ApprovalAnswered)
	require.Contains(t, again.Reply, "Request a1b2 was already answered: approved by cli:ann")
	require.Len(t, sig.sent, 1, "a second answer wakes nobody")

	denied := r.command(t, "t3", "/deny "+other.Request.ID+" not today")
	require.True(t, denied.ApprovalAnswered)
	require.Equal(t, "not today", sig.sent[1].Reason)
}

func TestApprovalCommandsRefuseWhatDoesNotWait(t *testing.T) {
	r := newApprovalRig(t)
	sig := r.sig
	require.Equal(t, noApprovalWaitingText, r.command(t, "t1", "/approve").Reply)
	r.ask(t, "aaaa", "exec", "one")
	r.ask(t, "bbbb", "write_file", "two")
	require.Equal(t, "Several requests wait: aaaa, bbbb. Say which: /approve <id>.", r.command(t, "t2", "/approve").Reply)
	require.Equal(t, `There is no approval request "ffff" in this chat. Waiting: aaaa, bbbb.`, r.command(t, "t3", "/approve ffff").Reply)
	require.Equal(t, "Usage: /approve [id] [always|rule]", r.command(t, "t4", "/approve aaaa bbbb").Reply)
	require.Contains(t, r.command(t, "t5", "/deny no way").Reply, "Several requests wait", "a reason is not an id")
	require.Empty(t, sig.sent)
}

func TestTimeoutClosesUnlessAnAnswerCameFirst(t *testing.T) {
	r := newApprovalRig(t)
	set := r.set
	ctx := context.Background()
	r.ask(t, "aaaa", "exec", "one")
	r.ask(t, "bbbb", "exec", "two")
	r.command(t, "t1", "/deny bbbb")
	closed, err := set.Approvals.ApprovalClose(ctx, protocol.ApprovalCloseInput{OriginKey: "cli:t", ID: "aaaa", Verdict: protocol.VerdictTimeout})
	require.NoError(t, err)
	require.Equal(t, protocol.VerdictTimeout, closed.Verdict)
	raced, err := set.Approvals.ApprovalClose(ctx, protocol.ApprovalCloseInput{OriginKey: "cli:t", ID: "bbbb", Verdict: protocol.VerdictTimeout})
	require.NoError(t, err)
	require.Equal(t, protocol.VerdictDeny, raced.Verdict, "the answer that raced the timer stands")
	require.Contains(t, r.command(t, "t2", "/approve aaaa").Reply, "nobody answered in time")
}

func TestAnswerForAGoneTaskIsSaidAndAFailedSignalReopens(t *testing.T) {
	r := newApprovalRig(t)
	set, sig := r.set, r.sig
	r.ask(t, "aaaa", "exec", "one")
	sig.err = serviceerror.NewNotFound("workflow not found")
	require.Equal(t, "The task that asked for exec one has ended; nothing was run.", r.command(t, "t1", "/approve aaaa").Reply)

	r.ask(t, "bbbb", "exec", "two")
	sig.err = errors.New("temporal unreachable")
	_, err := set.Commands.Command(context.Background(), r.said("cli:t", originChat, owner.ByChat, "t2", "/approve bbbb"))
	require.ErrorContains(t, err, "temporal unreachable")
	sig.err = nil
	require.True(t, r.command(t, "t3", "/approve bbbb").ApprovalAnswered, "the request was reopened for a retry")
}

func TestTwoAnswersAtOnceWakeTheAskerOnce(t *testing.T) {
	r := newApprovalRig(t)
	set, sig := r.set, r.sig
	r.ask(t, "aaaa", "exec", "one")
	var wg sync.WaitGroup
	answered := make(chan bool, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := set.Commands.Command(context.Background(), r.said("cli:t", originChat, owner.ByChat, "c"+string(rune('a'+i)), "/approve aaaa"))
			require.NoError(t, err)
			answered <- res.ApprovalAnswered
		}()
	}
	wg.Wait()
	close(answered)
	n := 0
	for a := range answered {
		if a {
			n++
		}
	}
	require.Equal(t, 1, n)
	require.Len(t, sig.sent, 1)
}
