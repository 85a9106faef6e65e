package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// askExec records an exec request of cli:t as the policy made it.
func (r *approvalRig) askExec(t *testing.T, id, command, rule string, once bool) protocol.ApprovalAskResult {
	t.Helper()
	return r.askIn(t, protocol.ApprovalAskInput{OriginKey: "cli:t", ID: id, Tool: "exec", Args: command,
		Key: "exec " + command, Rule: rule, Once: once})
}

// TestAlwaysCoversThisCommandOnly: issue 32's "always" on rm -rf build (here
// a command the guard lets through, asked by tools.approval.tools) covers
// that command and not rm -rf notes, until /new.
func TestAlwaysCoversThisCommandOnly(t *testing.T) {
	r := newApprovalRig(t)
	r.askExec(t, "aaaa", "rm -rf build", "", false)
	res := r.command(t, "t1", "/approve aaaa always")
	require.True(t, res.ApprovalAnswered)
	require.Equal(t, "Approved: exec rm -rf build — and this exact call from now on in this chat (/approvals lists it).", res.Reply)
	require.Equal(t, protocol.VerdictAlways, r.sig.sent[0].Verdict)
	require.Equal(t, "exec rm -rf build", r.sig.sent[0].Rule, "the proof covers what it allows")
	require.True(t, r.askExec(t, "bbbb", "rm -rf build", "", false).Allowed)
	require.False(t, r.askExec(t, "cccc", "rm -rf notes", "", false).Allowed)
	r.command(t, "t2", "/new")
	require.False(t, r.askExec(t, "dddd", "rm -rf build", "", false).Allowed, "/new forgets always")
}

// TestADenyListedCommandAsksEveryTime: "always" on a call the guard refuses
// approves it once; the same call asks again.
func TestADenyListedCommandAsksEveryTime(t *testing.T) {
	r := newApprovalRig(t)
	r.askExec(t, "aaaa", "rm -rf build", "", true)
	res := r.command(t, "t1", "/approve aaaa always")
	require.True(t, res.ApprovalAnswered)
	require.Equal(t, "Approved: exec rm -rf build — this once; the exec guard refuses it, so it asks every time.", res.Reply)
	require.Equal(t, protocol.VerdictApprove, r.sig.sent[0].Verdict)
	require.False(t, r.askExec(t, "bbbb", "rm -rf build", "", true).Allowed)
	require.Equal(t, "Nothing runs here without asking.", r.command(t, "t2", "/approvals").Reply)

	r.askExec(t, "cccc", "npm test", "exec npm test", false)
	r.command(t, "t3", "/approve cccc always")
	require.False(t, r.askExec(t, "eeee", "npm test", "", true).Allowed, "allowed before, refused by the guard now: asked")
}

func TestARuleCoversSimpleCommandsWithItsPrefix(t *testing.T) {
	r := newApprovalRig(t)
	r.askExec(t, "aaaa", "git status", "", false)
	require.Equal(t, "Request aaaa offers no rule: /approve aaaa, or /approve aaaa always for this exact call.",
		r.command(t, "t0", "/approve aaaa rule").Reply)
	require.Empty(t, r.sig.sent)

	r.askExec(t, "bbbb", "npm test", "exec npm test", false)
	res := r.command(t, "t1", "/approve bbbb rule")
	require.True(t, res.ApprovalAnswered)
	require.Equal(t, "Approved: exec npm test — and `npm test*` from now on in this chat (/approvals lists it).", res.Reply)
	require.Equal(t, protocol.VerdictRule, r.sig.sent[0].Verdict)
	require.Equal(t, "exec npm test", r.sig.sent[0].Rule)
	// The policy offers "exec npm test" as the rule of `npm test -- --watch`, none for `npm test; rm -rf x`.
	require.True(t, r.askExec(t, "cccc", "npm test -- --watch", "exec npm test", false).Allowed)
	require.False(t, r.askExec(t, "dddd", "npm test; rm -rf x", "", false).Allowed)
	require.False(t, r.askExec(t, "eeee", "npm testing", "exec npm testing", false).Allowed)
}

func TestApprovalsListsAndClearsWhatThisChatAllows(t *testing.T) {
	r := newApprovalRig(t)
	require.Equal(t, "Nothing runs here without asking.", r.command(t, "t0", "/approvals").Reply)
	r.askExec(t, "aaaa", "make build", "exec make build", false)
	r.command(t, "t1", "/approve aaaa always")
	r.askExec(t, "bbbb", "npm test", "exec npm test", false)
	r.command(t, "t2", "/approve bbbb rule")
	require.Equal(t, "Allowed in this chat without asking (/approvals clear forgets them):\n- always: exec make build\n- rule: `npm test*`",
		r.command(t, "t3", "/approvals").Reply)

	raw := r.run(t, r.said("cli:t", originChat, "", "t4", "/approvals clear"))
	require.Equal(t, clearRefusedText, raw.Reply, "a raw message clears nothing")
	require.True(t, r.askExec(t, "cccc", "make build", "exec make build", false).Allowed)

	require.Equal(t, "Forgot 2 approval(s): every risky call asks again.", r.run(t, r.said("cli:t", ownerCLI, owner.ByOwner, "t5", "/approvals clear")).Reply)
	require.False(t, r.askExec(t, "dddd", "make build", "exec make build", false).Allowed)
	require.False(t, r.askExec(t, "eeee", "npm test", "exec npm test", false).Allowed)
	require.Equal(t, "Usage: /approvals [clear]", r.command(t, "t6", "/approvals everything").Reply)
	require.Contains(t, r.command(t, "t7", "/help").Reply, "/approvals [clear] — List what runs here without asking")
}

// TestFirstWordKeysOfEarlierBuildsAreNotHonoured: a session that said
// "always" to `exec rm` before this build asks again.
func TestFirstWordKeysOfEarlierBuildsAreNotHonoured(t *testing.T) {
	r := newApprovalRig(t)
	ctx := t.Context()
	require.NoError(t, r.set.Approvals.store.Update(ctx, "cli:t", func(s *session.Session) error {
		s.Metadata = map[string]any{legacyAlwaysKey: []any{"exec rm"}}
		return nil
	}))
	require.False(t, r.askExec(t, "aaaa", "rm", "", false).Allowed)
	require.False(t, r.askExec(t, "bbbb", "rm -rf x", "", true).Allowed)
}
