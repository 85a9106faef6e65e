package activities

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

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

func approvalRig(t *testing.T) (*Set, *signals) {
	t.Helper()
	a := newActivities(t, nil)
	sig := &signals{}
	a.Client, a.Log = sig, slog.Default()
	return a.set(), sig
}

func ask(t *testing.T, set *Set, id, tool, args string) protocol.ApprovalAskResult {
	t.Helper()
	res, err := set.Approvals.ApprovalAsk(context.Background(), protocol.ApprovalAskInput{
		OriginKey: "cli:t", WorkflowID: "turn/cli:t", ID: id, Tool: tool, Args: args, Reason: "risky", Key: tool,
	})
	require.NoError(t, err)
	return res
}

func command(t *testing.T, set *Set, turn, text string) protocol.CommandResult {
	t.Helper()
	res, err := set.Commands.Command(context.Background(), step(turn, text))
	require.NoError(t, err)
	return res
}

func TestApproveWakesTheAskerOnce(t *testing.T) {
	set, sig := approvalRig(t)
	first := ask(t, set, "a1b2", "exec", "rm -rf build/")
	require.Equal(t, first.Request, ask(t, set, "a1b2", "exec", "rm -rf build/").Request, "a retried ask finds its record")
	other := ask(t, set, "a1b2", "exec", "git push")
	require.NotEqual(t, "a1b2", other.Request.ID, "another call with the same id gets its own")

	res := command(t, set, "t1", "/approve a1b2")
	require.True(t, res.ApprovalAnswered)
	require.Equal(t, "Approved: exec rm -rf build/.", res.Reply)
	require.Equal(t, []string{"turn/cli:t"}, sig.to)
	require.Equal(t, protocol.VerdictApprove, sig.sent[0].Verdict)
	require.Equal(t, "cli:", sig.sent[0].By)

	again := command(t, set, "t2", "/approve a1b2")
	require.False(t, again.ApprovalAnswered)
	require.Contains(t, again.Reply, "Request a1b2 was already answered: approved by cli:")
	require.Len(t, sig.sent, 1, "a second answer wakes nobody")

	denied := command(t, set, "t3", "/deny "+other.Request.ID+" not today")
	require.True(t, denied.ApprovalAnswered)
	require.Equal(t, "not today", sig.sent[1].Reason)
}

func TestApprovalCommandsRefuseWhatDoesNotWait(t *testing.T) {
	set, sig := approvalRig(t)
	require.Equal(t, noApprovalWaitingText, command(t, set, "t1", "/approve").Reply)
	ask(t, set, "aaaa", "exec", "one")
	ask(t, set, "bbbb", "write_file", "two")
	require.Equal(t, "Several requests wait: aaaa, bbbb. Say which: /approve <id>.", command(t, set, "t2", "/approve").Reply)
	require.Equal(t, `There is no approval request "ffff" in this chat. Waiting: aaaa, bbbb.`, command(t, set, "t3", "/approve ffff").Reply)
	require.Equal(t, "Usage: /approve [id] [always]", command(t, set, "t4", "/approve aaaa bbbb").Reply)
	require.Contains(t, command(t, set, "t5", "/deny no way").Reply, "Several requests wait", "a reason is not an id")
	require.Empty(t, sig.sent)
}

func TestAlwaysIsRememberedForTheSessionUntilNew(t *testing.T) {
	set, _ := approvalRig(t)
	ask(t, set, "aaaa", "exec", "rm -rf a")
	require.Contains(t, command(t, set, "t1", "/approve always").Reply, "for the rest of this conversation")
	require.True(t, ask(t, set, "cccc", "exec", "rm -rf b").Allowed)
	command(t, set, "t2", "/new")
	require.False(t, ask(t, set, "dddd", "exec", "rm -rf c").Allowed, "/new forgets always")
}

func TestTimeoutClosesUnlessAnAnswerCameFirst(t *testing.T) {
	set, _ := approvalRig(t)
	ctx := context.Background()
	ask(t, set, "aaaa", "exec", "one")
	ask(t, set, "bbbb", "exec", "two")
	command(t, set, "t1", "/deny bbbb")
	closed, err := set.Approvals.ApprovalClose(ctx, protocol.ApprovalCloseInput{OriginKey: "cli:t", ID: "aaaa", Verdict: protocol.VerdictTimeout})
	require.NoError(t, err)
	require.Equal(t, protocol.VerdictTimeout, closed.Verdict)
	raced, err := set.Approvals.ApprovalClose(ctx, protocol.ApprovalCloseInput{OriginKey: "cli:t", ID: "bbbb", Verdict: protocol.VerdictTimeout})
	require.NoError(t, err)
	require.Equal(t, protocol.VerdictDeny, raced.Verdict, "the answer that raced the timer stands")
	require.Contains(t, command(t, set, "t2", "/approve aaaa").Reply, "nobody answered in time")
}

func TestAnswerForAGoneTaskIsSaidAndAFailedSignalReopens(t *testing.T) {
	set, sig := approvalRig(t)
	ask(t, set, "aaaa", "exec", "one")
	sig.err = serviceerror.NewNotFound("workflow not found")
	require.Equal(t, "The task that asked for exec one has ended; nothing was run.", command(t, set, "t1", "/approve aaaa").Reply)

	ask(t, set, "bbbb", "exec", "two")
	sig.err = errors.New("temporal unreachable")
	_, err := set.Commands.Command(context.Background(), step("t2", "/approve bbbb"))
	require.ErrorContains(t, err, "temporal unreachable")
	sig.err = nil
	require.True(t, command(t, set, "t3", "/approve bbbb").ApprovalAnswered, "the request was reopened for a retry")
}

func TestTwoAnswersAtOnceWakeTheAskerOnce(t *testing.T) {
	set, sig := approvalRig(t)
	ask(t, set, "aaaa", "exec", "one")
	var wg sync.WaitGroup
	answered := make(chan bool, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := set.Commands.Command(context.Background(), step("c"+string(rune('a'+i)), "/approve aaaa"))
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
