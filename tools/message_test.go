package tools

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
)

type sentMessage struct {
	sessionKey string
	to         protocol.Route
	content    string
	media      []string
}

type fakeSender struct {
	sent   []sentMessage
	err    error
	queued bool
}

func (f *fakeSender) SendMessage(_ context.Context, env Env, to protocol.Route, content string, media []string) (bool, error) {
	if f.err != nil {
		return false, f.err
	}
	f.sent = append(f.sent, sentMessage{env.SessionKey, to, content, media})
	return f.queued, nil
}

func TestMessageTool(t *testing.T) {
	tg := protocol.Route{Channel: "telegram", ChatID: "42", ReplyTo: "9", SenderID: "u1"}
	thread := protocol.Route{Channel: "slack", ChatID: "C1", ThreadID: "1700.1"}
	cli := protocol.Route{Channel: "cli", ChatID: "direct"}
	for _, tc := range []struct {
		name       string
		sessionKey string
		route      protocol.Route
		args       map[string]any
		senderErr  error
		queued     bool
		want       string
		sent       *sentMessage
		isErr      bool
		answered   bool
	}{
		{name: "defaults to the current conversation, reply-to kept", sessionKey: "telegram:42", route: tg, args: map[string]any{"content": "hi"},
			want: "Message sent to telegram:42", sent: &sentMessage{"telegram:42", tg, "hi", nil}, answered: true},
		{name: "naming the current chat keeps its route", sessionKey: "telegram:42", route: tg, args: map[string]any{"content": "hi", "channel": "telegram", "chat_id": "42"},
			want: "Message sent to telegram:42", sent: &sentMessage{"telegram:42", tg, "hi", nil}, answered: true},
		{name: "explicit target", sessionKey: "telegram:42", route: tg, args: map[string]any{"content": "hi", "channel": "discord", "chat_id": "7"},
			want: "Message sent to discord:7", sent: &sentMessage{"telegram:42", protocol.Route{Channel: "discord", ChatID: "7"}, "hi", nil}},
		{name: "another chat of the same channel", sessionKey: "telegram:42", route: tg, args: map[string]any{"content": "hi", "chat_id": "43"},
			want: "Message sent to telegram:43", sent: &sentMessage{"telegram:42", protocol.Route{Channel: "telegram", ChatID: "43"}, "hi", nil}},
		{name: "a thread survives", sessionKey: "unified:default", route: thread, args: map[string]any{"content": "x"},
			want: "Message sent to slack:C1", sent: &sentMessage{"unified:default", thread, "x", nil}, answered: true},
		{name: "queued while the gateway is down", sessionKey: "telegram:42", route: tg, args: map[string]any{"content": "later"}, queued: true,
			want: "Message queued for telegram:42: its channel is not connected now; it is delivered when a gateway holding it comes back",
			sent: &sentMessage{"telegram:42", tg, "later", nil}, answered: true},
		{name: "media resolved", sessionKey: "cli:direct", route: cli, args: map[string]any{"content": "see", "media": []any{"report.txt", "https://e.example/a.png"}},
			want: "Message sent to cli:direct with 2 attachment(s)", answered: true},
		{name: "missing media file", sessionKey: "cli:direct", route: cli, args: map[string]any{"content": "x", "media": []any{"nope.png"}},
			want: "Error: media \"nope.png\": file not found" + errorHint, isErr: true},
		{name: "media outside workspace", sessionKey: "cli:direct", route: cli, args: map[string]any{"content": "x", "media": []any{"/etc/hostname"}}, isErr: true},
		{name: "no target", sessionKey: "", args: map[string]any{"content": "x"}, want: "Error: No target channel/chat specified" + errorHint, isErr: true},
		{name: "empty content", sessionKey: "cli:direct", route: cli, args: map[string]any{"content": "  "}, isErr: true},
		{name: "sender fails", sessionKey: "cli:direct", route: cli, args: map[string]any{"content": "x"}, senderErr: errors.New("channel down"),
			want: "Error sending message: channel down" + errorHint, isErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sender := &fakeSender{err: tc.senderErr, queued: tc.queued}
			env, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, MessageSender: sender})
			writeTestFile(t, env.Workspace, "report.txt", []byte("r"))
			env.SessionKey, env.Route = tc.sessionKey, tc.route
			res := call(t, r, env, "message", tc.args)
			require.Equal(t, tc.isErr, res.IsError, res.Text)
			require.Equal(t, tc.answered, res.AnsweredOrigin)
			if tc.want != "" {
				require.Equal(t, tc.want, res.Text)
			}
			if tc.isErr {
				require.Empty(t, sender.sent)
			}
			if tc.sent != nil {
				require.Equal(t, []sentMessage{*tc.sent}, sender.sent)
			}
			if tc.name == "media resolved" {
				require.Equal(t, []string{filepath.Join(env.Workspace, "report.txt"), "https://e.example/a.png"}, sender.sent[0].media)
			}
		})
	}
}

func TestMessageToolWithoutSender(t *testing.T) {
	res := NewMessageTool(nil).Run(context.Background(), Env{SessionKey: "cli:x", Route: protocol.Route{Channel: "cli", ChatID: "x"}}, map[string]any{"content": "hi"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "not available")
}
