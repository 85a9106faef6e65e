package channels

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
)

func labels(buttons []ApprovalButton) (out [][2]string) {
	for _, b := range buttons {
		out = append(out, [2]string{b.Label, b.Command})
	}
	return out
}

// TestTheButtonsFollowWhatTheRequestOffers: no "always" for a call the
// guard refuses, the rule's button shows the rule, every press fits
// Telegram's callback_data.
func TestTheButtonsFollowWhatTheRequestOffers(t *testing.T) {
	require.Equal(t, [][2]string{{"Approve", "/approve 1a2b"}, {"Deny", "/deny 1a2b"}},
		labels(ApprovalButtons(protocol.ApprovalRequest{ID: "1a2b", Once: true})))
	require.Equal(t, [][2]string{{"Approve", "/approve 1a2b"}, {"Deny", "/deny 1a2b"}, {"Always this command", "/approve 1a2b always"}},
		labels(ApprovalButtons(protocol.ApprovalRequest{ID: "1a2b"})))
	withRule := ApprovalButtons(protocol.ApprovalRequest{ID: "1a2b22", Rule: "exec npm test"})
	require.Equal(t, [2]string{"Always npm test* here", "/approve 1a2b22 rule"}, labels(withRule)[3])
	require.Equal(t, protocol.VerdictRule, withRule[3].Verdict)
	for _, b := range withRule {
		require.True(t, IsApprovalPress(b.Command), b.Command)
	}
	long := ApprovalButtons(protocol.ApprovalRequest{ID: "1a2b", Rule: "exec ./node_modules/.bin/some-very-long-program-name subcommand"})
	require.LessOrEqual(t, len(long[3].Label), len("Always  here")+maxRuleLabel)
}

// TestTakePressAnswersOnlyWhatTheAgentTook: the request is marked answered
// once the presser's command got in, not for a refused presser, nor when
// Temporal did not take it (the press is taken in again), nor twice.
func TestTakePressAnswersOnlyWhatTheAgentTook(t *testing.T) {
	down := true
	b := baseOn(NewRecentKeys(8), func(ctx context.Context, msg protocol.Inbound, admitted Admitted) error {
		switch {
		case msg.Route.SenderID == "stranger":
			return ErrRefused
		}
		if err := admitted(ctx, &msg); err != nil || down {
			return errors.Join(err, errors.New("admitted, but temporal unreachable"))
		}
		return nil
	})
	answered := 0
	press := func(key, sender string) error {
		msg := protocol.Inbound{Route: protocol.Route{Channel: "test", ChatID: "c", SenderID: sender}, Content: "/approve 1a2b"}
		return b.TakePress(context.Background(), key, msg, func() { answered++ })
	}
	require.ErrorIs(t, press("p1", "stranger"), ErrRefused)
	require.Zero(t, answered, "a refused presser leaves the request open")
	require.Error(t, press("p2", "ann"))
	require.Zero(t, answered, "not taken: not answered")
	down = false
	require.NoError(t, press("p2", "ann"), "the press not taken is taken in again")
	require.Equal(t, 1, answered)
	require.ErrorIs(t, press("p2", "ann"), ErrDuplicate)
	require.Equal(t, 1, answered)
}

// TestVerdictStyle: approve and deny get their own styles, the "always"
// answers the plain one.
func TestVerdictStyle(t *testing.T) {
	var got []string
	for _, b := range ApprovalButtons(protocol.ApprovalRequest{ID: "1a2b", Rule: "git *"}) {
		got = append(got, VerdictStyle(b.Verdict, "positive", "destructive", "default"))
	}
	require.Equal(t, []string{"positive", "destructive", "default", "default"}, got)
}
