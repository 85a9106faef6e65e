package tools

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

type sentMessage struct {
	sessionKey, channel, chatID, content string
	media                                []string
}

type fakeSender struct {
	sent []sentMessage
	err  error
}

func (f *fakeSender) SendMessage(_ context.Context, env Env, channel, chatID, content string, media []string) error {
	if f.err != nil {
		return f.err
	}
	f.sent = append(f.sent, sentMessage{env.SessionKey, channel, chatID, content, media})
	return nil
}

func TestMessageTool(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sessionKey string
		args       map[string]any
		senderErr  error
		want       string
		sent       *sentMessage
		isErr      bool
	}{
		{name: "defaults to the current conversation", sessionKey: "telegram:42", args: map[string]any{"content": "hi"},
			want: "Message sent to telegram:42", sent: &sentMessage{"telegram:42", "telegram", "42", "hi", nil}},
		{name: "explicit target", sessionKey: "telegram:42", args: map[string]any{"content": "hi", "channel": "discord", "chat_id": "7"},
			want: "Message sent to discord:7", sent: &sentMessage{"telegram:42", "discord", "7", "hi", nil}},
		{name: "chat id with colons", sessionKey: "slack:C1:thread9", args: map[string]any{"content": "x"},
			want: "Message sent to slack:C1:thread9", sent: &sentMessage{"slack:C1:thread9", "slack", "C1:thread9", "x", nil}},
		{name: "media resolved", sessionKey: "cli:direct", args: map[string]any{"content": "see", "media": []any{"report.txt", "https://e.example/a.png"}},
			want: "Message sent to cli:direct with 2 attachment(s)"},
		{name: "missing media file", sessionKey: "cli:direct", args: map[string]any{"content": "x", "media": []any{"nope.png"}},
			want: "Error: media \"nope.png\": file not found" + errorHint, isErr: true},
		{name: "media outside workspace", sessionKey: "cli:direct", args: map[string]any{"content": "x", "media": []any{"/etc/hostname"}}, isErr: true},
		{name: "no target", sessionKey: "", args: map[string]any{"content": "x"}, want: "Error: No target channel/chat specified" + errorHint, isErr: true},
		{name: "empty content", sessionKey: "cli:direct", args: map[string]any{"content": "  "}, isErr: true},
		{name: "sender fails", sessionKey: "cli:direct", args: map[string]any{"content": "x"}, senderErr: errors.New("channel down"),
			want: "Error sending message: channel down" + errorHint, isErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sender := &fakeSender{err: tc.senderErr}
			env, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, MessageSender: sender})
			writeTestFile(t, env.Workspace, "report.txt", []byte("r"))
			env.SessionKey = tc.sessionKey
			res := call(t, r, env, "message", tc.args)
			require.Equal(t, tc.isErr, res.IsError, res.Text)
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
	res := NewMessageTool(nil).Run(context.Background(), Env{SessionKey: "cli:x"}, map[string]any{"content": "hi"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "not available")
}
