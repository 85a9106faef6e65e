package channels

import (
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
