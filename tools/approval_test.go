package tools

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestApprovalIsThePolicysThirdVerdict: the table of what asks, by mode.
func TestApprovalIsThePolicysThirdVerdict(t *testing.T) {
	ws := t.TempDir()
	outside := filepath.Join(t.TempDir(), "x.txt")
	r := NewRegistry()
	require.NoError(t, RegisterBuiltins(r, BuiltinOptions{ExecEnabled: true, Exec: DefaultExecOptions()}))
	chatTurn := NewPolicy(protocol.ProfileFor(protocol.ChatTurn, false), ws)
	heartbeat := NewPolicy(protocol.ProfileFor(protocol.HeartbeatTurn, false), ws)

	cases := []struct {
		name     string
		cfg      config.Approval
		policy   Policy
		restrict bool
		tool     string
		args     string
		key      string // "" = no ask
		reason   string
	}{
		{"off never asks", config.Approval{Mode: "off"}, chatTurn, true, "exec", `{"command":"rm -rf build"}`, "", ""},
		{"risky: a deny-list hit asks", config.Approval{Mode: "risky"}, chatTurn, true, "exec", `{"command":"rm -rf build/"}`, "exec rm -rf build/", "exec guard would refuse it: dangerous pattern detected: recursive or forced rm"},
		{"risky: a risky command asks", config.Approval{Mode: "risky"}, chatTurn, true, "exec", `{"command":"git push   origin main"}`, "exec git push origin main", "a risky command"},
		{"risky: a plain command runs", config.Approval{Mode: "risky"}, chatTurn, true, "exec", `{"command":"ls -la"}`, "", ""},
		{"risky: configured commands replace the defaults", config.Approval{Mode: "risky", Commands: []string{`\bmake\b`}}, chatTurn, true, "exec", `{"command":"make deploy"}`, "exec make deploy", "a risky command"},
		{"risky: configured commands replace the defaults (git push runs)", config.Approval{Mode: "risky", Commands: []string{`\bmake\b`}}, chatTurn, true, "exec", `{"command":"git push"}`, "", ""},
		{"risky: tool globs ask", config.Approval{Mode: "risky", Tools: []string{"write_*"}}, chatTurn, true, "write_file", `{"path":"a.txt","content":"x"}`, "write_file a.txt", "write_file asks first"},
		{"risky: a write outside asks when not confined", config.Approval{Mode: "risky"}, chatTurn, false, "write_file", `{"path":"` + outside + `","content":"x"}`, "write_file " + outside, "writes outside the workspace"},
		{"risky: a write inside runs", config.Approval{Mode: "risky"}, chatTurn, false, "write_file", `{"path":"a.txt","content":"x"}`, "", ""},
		{"risky: confined, outside is refused not asked", config.Approval{Mode: "risky"}, chatTurn, true, "write_file", `{"path":"` + outside + `","content":"x"}`, "", ""},
		{"all: every change asks", config.Approval{Mode: "all"}, chatTurn, true, "write_file", `{"path":"a.txt","content":"x"}`, "write_file a.txt", "changes things"},
		{"all: reading never asks", config.Approval{Mode: "all"}, chatTurn, true, "read_file", `{"path":"a.txt"}`, "", ""},
		{"the heartbeat never asks", config.Approval{Mode: "all"}, heartbeat, true, "exec", `{"command":"rm -rf /"}`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rules, err := NewApproval(c.cfg)
			require.NoError(t, err)
			env := Env{Workspace: ws, RestrictToWorkspace: c.restrict, Policy: c.policy}
			ask := r.Ask(context.Background(), rules, env, c.tool, c.args)
			if c.key == "" {
				require.Nil(t, ask)
				return
			}
			require.NotNil(t, ask)
			require.Equal(t, c.key, ask.Key)
			require.Contains(t, ask.Reason, c.reason)
		})
	}
}

func TestApprovedExecRunsWhatTheGuardWouldRefuse(t *testing.T) {
	ws := t.TempDir()
	r := NewRegistry()
	require.NoError(t, RegisterBuiltins(r, BuiltinOptions{ExecEnabled: true, Exec: DefaultExecOptions()}))
	env := Env{Workspace: ws, RestrictToWorkspace: true, Policy: NewPolicy(protocol.ProfileFor(protocol.ChatTurn, false), ws)}
	args := `{"command":"mkdir -p build && rm -rf build && echo removed"}`
	refused := r.Execute(context.Background(), env, "exec", args)
	require.True(t, refused.IsError)
	require.Contains(t, refused.Text, "blocked by safety guard")
	env.Approved = true
	ran := r.Execute(context.Background(), env, "exec", args)
	require.False(t, ran.IsError, ran.Text)
	require.Contains(t, ran.Text, "removed")
}

func TestApprovalConfigErrorsNameTheKey(t *testing.T) {
	_, err := NewApproval(config.Approval{Mode: "risky", Commands: []string{"("}})
	require.ErrorContains(t, err, "tools.approval.commands[0]")
}
