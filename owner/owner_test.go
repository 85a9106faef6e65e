package owner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/secrets"
)

func key(t *testing.T) Key {
	k, err := NewKey()
	require.NoError(t, err)
	return k
}

func approveMessage() protocol.Inbound {
	return protocol.Inbound{ID: "tg-1", SessionKey: "telegram:45", Content: "/approve 1a2b",
		Route: protocol.Route{Channel: "telegram", ChatID: "45", SenderID: "7|ann"}}
}

func TestASealOpensOnlyOnTheMessageItWasMadeFor(t *testing.T) {
	k := key(t)
	msg := approveMessage()
	k.Seal(&msg, ByChat)
	by, err := k.Opened(msg)
	require.NoError(t, err)
	require.Equal(t, ByChat, by)

	for name, change := range map[string]func(m *protocol.Inbound){
		"tampered content":  func(m *protocol.Inbound) { m.Content = "/approve 1a2b always" },
		"another session":   func(m *protocol.Inbound) { m.SessionKey = "telegram:46" },
		"another chat":      func(m *protocol.Inbound) { m.Route.ChatID = "46" },
		"another channel":   func(m *protocol.Inbound) { m.Route.Channel = "slack" },
		"another sender":    func(m *protocol.Inbound) { m.Route.SenderID = "8|bob" },
		"another id":        func(m *protocol.Inbound) { m.ID = "tg-2" },
		"a cron kind":       func(m *protocol.Inbound) { m.Kind = protocol.CronTurn },
		"a file added":      func(m *protocol.Inbound) { m.Media = []string{"media/x.png"} },
		"claimed the owner": func(m *protocol.Inbound) { m.Seal = "v1.owner." + m.Seal[len("v1.chat."):] },
		"no seal":           func(m *protocol.Inbound) { m.Seal = "" },
		"garbage":           func(m *protocol.Inbound) { m.Seal = "v1.chat.zz" },
	} {
		m := msg
		change(&m)
		_, err := k.Opened(m)
		require.Error(t, err, name)
	}
	_, err = key(t).Opened(msg)
	require.ErrorIs(t, err, ErrBadSeal, "another key")
	_, err = Key{}.Opened(msg)
	require.ErrorIs(t, err, ErrNoKey)
	unsealed := approveMessage()
	Key{}.Seal(&unsealed, ByOwner)
	require.Empty(t, unsealed.Seal, "no key, no seal")
	_, err = k.Opened(unsealed)
	require.ErrorIs(t, err, ErrNoSeal)
}

func TestAnAnswerProofNamesTheRunTheIdTheVerdictAndTheRule(t *testing.T) {
	k := key(t)
	a := protocol.ApprovalAnswer{ID: "1a2b", Verdict: protocol.VerdictAlways, Rule: "exec rm -rf build", By: "telegram:7"}
	k.ProveAnswer(&a, "turn/telegram:45", "run-1")
	require.True(t, k.AnswerProven(a, "turn/telegram:45", "run-1"))
	a.By, a.Reason = "someone else", "any reason" // not what the proof covers
	require.True(t, k.AnswerProven(a, "turn/telegram:45", "run-1"))

	require.False(t, k.AnswerProven(a, "turn/telegram:46", "run-1"), "another workflow")
	require.False(t, k.AnswerProven(a, "turn/telegram:45", "run-2"), "another run")
	require.False(t, key(t).AnswerProven(a, "turn/telegram:45", "run-1"), "another key")
	for name, change := range map[string]func(a *protocol.ApprovalAnswer){
		"another id":      func(a *protocol.ApprovalAnswer) { a.ID = "1a2c" },
		"another verdict": func(a *protocol.ApprovalAnswer) { a.Verdict = protocol.VerdictRule },
		"another rule":    func(a *protocol.ApprovalAnswer) { a.Rule = "exec rm -rf notes" },
		"no proof":        func(a *protocol.ApprovalAnswer) { a.Proof = "" },
	} {
		b := a
		change(&b)
		require.False(t, k.AnswerProven(b, "turn/telegram:45", "run-1"), name)
	}
	msg := approveMessage()
	k.Seal(&msg, ByOwner)
	forged := protocol.ApprovalAnswer{ID: "1a2b", Verdict: protocol.VerdictApprove, Proof: msg.Seal[len("v1.owner."):]}
	require.False(t, k.AnswerProven(forged, "turn/telegram:45", "run-1"), "a message's seal is no answer's proof")
}

func TestTheKeyFileIsMadeOnceAndKeptPrivate(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	k, err := Resolve(context.Background(), FileIn(home), nil)
	require.NoError(t, err)
	st, err := os.Stat(filepath.Join(home, FileName))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	again, err := Resolve(context.Background(), FileIn(home), nil)
	require.NoError(t, err)
	require.True(t, again.Equal(k), "an existing install keeps its key")
	require.Equal(t, "[redacted]", secrets.FromConfig(nil, nil).Redact(k.Hex()), "masked wherever it might show")
	require.NotContains(t, fmt.Sprintf("%v %+v %#v %s", k, k, k, k), k.Hex())
}
