package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/workers"
)

// benchTurns measures whole turns through the real dev server with an
// in-process worker; reply scripts one turn's model answers.
func benchTurns(b *testing.B, reply func(i int) []modeltest.Step) {
	dev := testenv.StartDevServer(b)
	model := modeltest.New()
	defer model.Close()
	home := testenv.NewHome(b, model.URL(), nil)
	cfg, _, err := config.Load(home.ConfigPath)
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	set, err := workers.Start(dev.Client, workers.Options{Config: cfg, Turns: true, Models: true, Workspace: true, Log: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer set.Stop()
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}
	ctx := context.Background()
	run := func(i int) {
		model.Script(reply(i)...)
		key := fmt.Sprintf("bench%d", i%4)
		if _, err := bus.Publish(ctx, protocol.Inbound{ID: fmt.Sprint(i), SessionKey: "cli:" + key, Route: protocol.Route{Channel: "cli", ChatID: key}, Content: "hi", SentAt: time.Now()}); err != nil {
			b.Fatal(err)
		}
		if err := dev.Client.GetWorkflow(ctx, "turn/cli:"+key, "").Get(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	run(-1) // warm the worker's caches and the server's namespace
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run(i)
	}
}

// BenchmarkTurnText is one turn: 5 local state activities, one model call, delivery skipped.
func BenchmarkTurnText(b *testing.B) {
	benchTurns(b, func(int) []modeltest.Step { return []modeltest.Step{modeltest.Text("hello")} })
}

// BenchmarkTurnToolRoundTrip adds one tool call and a second model call.
func BenchmarkTurnToolRoundTrip(b *testing.B) {
	benchTurns(b, func(i int) []modeltest.Step {
		return []modeltest.Step{
			modeltest.ToolCalls(modeltest.Call{ID: fmt.Sprintf("c%d", i), Name: "list_dir", Args: `{"path":"."}`}),
			modeltest.Text("done"),
		}
	})
}
