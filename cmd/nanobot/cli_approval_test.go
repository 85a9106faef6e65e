package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

func TestApprovalPromptAnswers(t *testing.T) {
	for line, want := range map[string]string{
		"y": "/approve 1a2b", "YES": "/approve 1a2b", " always ": "/approve 1a2b always", "rule": "/approve 1a2b rule",
		"": "/deny 1a2b", "n": "/deny 1a2b", "maybe": "/deny 1a2b", "yy": "/deny 1a2b",
	} {
		require.Equal(t, want, approvalAnswer(line, "1a2b"), "line %q", line)
	}
}

func TestWaitingLineSaysHowLongAgo(t *testing.T) {
	asked := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	w := protocol.ApprovalRequest{ID: "1a2b", Tool: "exec", Args: "rm -rf build/", AskedAt: asked}
	require.Equal(t, "waiting for approval: exec rm -rf build/ (asked 12 min ago)", waitingLine(w, asked.Add(12*time.Minute+5*time.Second)))
}

// TestPrompterHandsAnOpenReadOn: a read whose prompt was abandoned (the
// request answered elsewhere) is taken by the next ask, under its prompt,
// so no line is lost and no two reads race for the terminal.
func TestPrompterHandsAnOpenReadOn(t *testing.T) {
	in, feed := io.Pipe()
	out := &testenv.SyncBuffer{}
	p := newPrompter(newPlainReader(in, out))
	first := p.ask(approvalPrompt)
	require.Eventually(t, func() bool { return out.String() == approvalPrompt }, 5*time.Second, time.Millisecond)
	second := p.ask(youPrompt) // the approval was answered in another chat
	require.Equal(t, first, second, "the open read is handed on")
	go func() { _, _ = feed.Write([]byte("hello\n")) }()
	r := <-second
	p.took()
	require.NoError(t, r.err)
	require.Equal(t, "hello", r.line)
	require.True(t, strings.HasSuffix(out.String(), approvalPrompt+"\n"+youPrompt), "the prompt was changed: %q", out.String())
	third := p.ask(youPrompt)
	require.NotEqual(t, second, third, "after a line was taken, a new read")
	_ = feed.Close()
	require.ErrorIs(t, (<-third).err, io.EOF)
}
