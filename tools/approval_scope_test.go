package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// askFor is the policy's ask on an exec command with approval on for every exec.
func askFor(t *testing.T, command string) *protocol.AskRef {
	t.Helper()
	ws := t.TempDir()
	r := NewRegistry()
	require.NoError(t, RegisterBuiltins(r, BuiltinOptions{ExecEnabled: true, Exec: DefaultExecOptions()}))
	rules, err := NewApproval(config.Approval{Mode: "risky", Tools: []string{"exec"}})
	require.NoError(t, err)
	env := Env{Workspace: ws, RestrictToWorkspace: true, Policy: NewPolicy(protocol.ProfileFor(protocol.ChatTurn, false), ws)}
	args, err := json.Marshal(map[string]any{"command": command})
	require.NoError(t, err)
	ask := r.Ask(context.Background(), rules, env, "exec", string(args))
	require.NotNil(t, ask, command)
	return ask
}

// TestAlwaysCoversTheExactCommand: issue 32's "always on rm -rf build" must not cover "rm -rf notes".
func TestAlwaysCoversTheExactCommand(t *testing.T) {
	build := askFor(t, "rm -rf build")
	require.Equal(t, "exec rm -rf build", build.Key)
	require.NotEqual(t, build.Key, askFor(t, "rm -rf notes").Key)
	require.Equal(t, build.Key, askFor(t, "  rm   -rf\tbuild ").Key, "whitespace is normalised")
	require.NotEqual(t, askFor(t, `rm -rf "my dir"`).Key, askFor(t, "rm -rf my dir").Key, "quotes are part of the command")
	require.NotEqual(t, askFor(t, "mkdir -p build && rm -rf build").Key, askFor(t, "mkdir -p notes && rm -rf notes").Key)
}

// TestADenyListedCommandIsAskedEveryTime: the guard's verdict rides on the ask as Once, with no rule.
func TestADenyListedCommandIsAskedEveryTime(t *testing.T) {
	ask := askFor(t, "rm -rf build")
	require.True(t, ask.Once)
	require.Empty(t, ask.Rule)
	require.Contains(t, ask.Reason, "exec guard would refuse it")
	plain := askFor(t, "npm test")
	require.False(t, plain.Once)
}

func TestARuleIsOfferedForASimpleProgramAndSubcommand(t *testing.T) {
	for command, rule := range map[string]string{
		"npm test":                 "exec npm test",
		"npm test -- --watch":      "exec npm test",
		"  git   push origin main": "exec git push",
		"./gradlew build":          "exec ./gradlew build",
		"npm test; rm -rf x":       "",
		"npm test && rm x":         "",
		"npm test & rm x":          "",
		"npm test || rm x":         "",
		"npm test | sh":            "",
		"npm test `rm x`":          "",
		"npm test $(rm x)":         "",
		"npm test > out.txt":       "",
		"npm test < in.txt":        "",
		"npm test\nrm x":           "",
		"cd x && git push":         "",
		"ls":                       "",
		"rm -f x":                  "", // a flag is no subcommand
		"sudo npm test":            "", // a program that runs another
		"ssh host rm x":            "",
		"/usr/bin/sudo rm x":       "",
		"FOO=1 npm test":           "",
		"npm 'test'":               "",
	} {
		require.Equal(t, rule, askFor(t, command).Rule, command)
	}
}

// TestARuleMatchesOnlySimpleCommandsAtAWordBoundary: a stored rule is the
// offered rule of a later command, so only these match "npm test*".
func TestARuleMatchesOnlySimpleCommandsAtAWordBoundary(t *testing.T) {
	rule := commandRule("npm test")
	require.Equal(t, rule, commandRule("npm test -- --watch"))
	require.Equal(t, rule, commandRule("npm  test"))
	require.NotEqual(t, rule, commandRule("npm testing"))
	require.NotEqual(t, rule, commandRule("npm test; rm -rf x"))
	require.NotEqual(t, rule, commandRule("npm test$(echo ';') rm -rf x"))
	require.Empty(t, commandRule("npm test $'\\x3b' rm -rf x"), "an escaped ; is no second command, but nothing that reads like one passes")
}
