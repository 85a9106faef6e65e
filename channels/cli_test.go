package channels

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCLIStreamsThenSkipsTheDuplicateReply(t *testing.T) {
	var out bytes.Buffer
	hub, cli := NewStreamHub(), NewCLI(&out)
	defer hub.Subscribe("cli:direct", cli.Draw)()
	hub.Publish(StreamEvent{SessionKey: "cli:other", Delta: "not mine"})
	hub.Publish(StreamEvent{SessionKey: "cli:direct", Delta: "Let me look."})
	hub.Publish(StreamEvent{SessionKey: "cli:direct", End: true})
	hub.Publish(StreamEvent{SessionKey: "cli:direct", Delta: "Hel"})
	hub.Publish(StreamEvent{SessionKey: "cli:direct", Reset: true}) // a retried attempt
	hub.Publish(StreamEvent{SessionKey: "cli:direct", Delta: "Hello"})
	hub.Publish(StreamEvent{SessionKey: "cli:direct", End: true})
	require.NoError(t, cli.Send(context.Background(), Reply{Turn: "t1", Text: "Hello"}))
	require.NoError(t, cli.Send(context.Background(), Reply{Turn: "t1", Text: "Hello"}), "a retried delivery")
	require.Equal(t, "Let me look.\nHel\n[retrying…]\nHello\n", out.String())
}

func TestCLIPrintsRepliesItDidNotStream(t *testing.T) {
	var out bytes.Buffer
	cli := NewCLI(&out)
	require.NoError(t, cli.Send(context.Background(), Reply{Turn: "t1", Text: "from another worker"}))
	cli.QuietErrors = true
	require.NoError(t, cli.Send(context.Background(), Reply{Turn: "t2", Text: "401", StopReason: "error"}))
	require.Equal(t, "from another worker\n", out.String())
	require.Len(t, cli.Replies(), 2, "every reply reaches the waiting command")
}

func TestStreamHubUnsubscribe(t *testing.T) {
	hub := NewStreamHub()
	n := 0
	cancel := hub.Subscribe("k", func(StreamEvent) { n++ })
	hub.Publish(StreamEvent{SessionKey: "k", Delta: "a"})
	cancel()
	hub.Publish(StreamEvent{SessionKey: "k", Delta: "b"})
	require.Equal(t, 1, n)
	var nilHub *StreamHub
	nilHub.Publish(StreamEvent{SessionKey: "k"}) // a worker without a hub
}
