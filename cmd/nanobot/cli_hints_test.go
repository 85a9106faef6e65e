package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// delivering marks the context of the delivery activity's Send, whose
// state query the fake turn answers at once.
type delivering struct{}

// fakeTurn is the turn a thin client follows, as its Temporal client
// sees it: the state query and the run. Every query but the delivery's
// is held until release, as a busy machine holds a poll in flight.
type fakeTurn struct {
	client.Client // only QueryWorkflow and GetWorkflow are called
	hints         []string
	failDelivery  bool // the delivery's query fails (the turn did not answer in time)

	mu      sync.Mutex
	waiting int // queries held
	release chan struct{}
	ended   chan struct{}
}

func newFakeTurn(hints ...string) *fakeTurn {
	return &fakeTurn{hints: hints, release: make(chan struct{}), ended: make(chan struct{})}
}

func (f *fakeTurn) QueryWorkflow(ctx context.Context, _, _, query string, _ ...any) (converter.EncodedValue, error) {
	if query != protocol.QueryState {
		return nil, errors.New("unexpected query " + query)
	}
	if ctx.Value(delivering{}) != nil {
		if f.failDelivery {
			return nil, context.DeadlineExceeded
		}
	} else {
		f.mu.Lock()
		f.waiting++
		f.mu.Unlock()
		select {
		case <-f.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	data, err := json.Marshal(protocol.TurnState{Hints: f.hints})
	return jsonValue(data), err
}

func (f *fakeTurn) held() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waiting
}

func (f *fakeTurn) GetWorkflow(context.Context, string, string) client.WorkflowRun {
	return fakeRun{ended: f.ended}
}

// fakeRun is the turn's run: it ends when the test closes ended.
type fakeRun struct {
	client.WorkflowRun
	ended chan struct{}
}

func (r fakeRun) Get(ctx context.Context, _ any) error {
	select {
	case <-r.ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// jsonValue is a query result as the SDK hands it over.
type jsonValue []byte

func (v jsonValue) HasValue() bool    { return len(v) > 0 }
func (v jsonValue) Get(ptr any) error { return json.Unmarshal(v, ptr) }

// thinSession is a thin client's session on the fake turn, drawing to out.
func thinSession(turn *fakeTurn, out io.Writer) *cliSession {
	cli := channels.NewCLI(out)
	cli.Plain = true
	s := &cliSession{
		r:   &runtimeEnv{cfg: config.Default(), conn: &temporalConn{Client: turn}},
		cli: cli, key: "cli:ops", log: slog.New(slog.DiscardHandler),
	}
	s.thin.Store(true)
	return s
}

// TestHintIsNeverDrawnAfterTheAnswer: the poll of the turn's tool lines is
// in flight when the delivery draws the answer (the race that printed
// "Cleaned the build." above its "↳ exec rm -rf build" line). The line is
// drawn before the answer, once, and nothing after it; when the turn
// cannot be asked at delivery, the line is left out rather than drawn late.
func TestHintIsNeverDrawnAfterTheAnswer(t *testing.T) {
	for _, c := range []struct {
		name         string
		failDelivery bool
		want         string
	}{
		{"drawn before the answer", false, "↳ exec rm -rf build\nCleaned the build.\n"},
		{"left out when the turn cannot be asked", true, "Cleaned the build.\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			turn := newFakeTurn("exec rm -rf build")
			turn.failDelivery = c.failDelivery
			out := &testenv.SyncBuffer{}
			s := thinSession(turn, out)
			msg := protocol.Inbound{ID: "m1", SessionKey: s.key, Content: "clean the build"}
			done := make(chan error, 1)
			go func() { _, err := s.wait(context.Background(), msg); done <- err }()

			// The worker check and the first poll are both in flight, held.
			require.Eventually(t, func() bool { return turn.held() >= 2 }, 10*time.Second, time.Millisecond)
			ctx := context.WithValue(context.Background(), delivering{}, true)
			require.NoError(t, s.cli.Send(ctx, channels.Reply{
				ID: "t1", Turn: "t1", SessionKey: s.key, MessageIDs: []string{msg.ID}, Text: "Cleaned the build.", Kind: protocol.ReplyAnswer,
			}))
			close(turn.release) // the poll lands just after the answer
			close(turn.ended)
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("wait did not return after the answer")
			}
			require.Equal(t, c.want, out.String())
		})
	}
}

// TestStaleHintStateIsNotDrawn: a state asked before the one drawn last
// (two pollers: the loop and the delivery) neither redraws nor resets.
func TestStaleHintStateIsNotDrawn(t *testing.T) {
	out := &testenv.SyncBuffer{}
	cli := channels.NewCLI(out)
	cli.Plain = true
	var h hintLines
	h.follow("m1")
	old, fresh := h.ask(), h.ask()
	h.draw(cli, fresh, []string{"read_file a"})
	h.draw(cli, old, nil) // answered late, from before the tool ran
	h.draw(cli, h.ask(), []string{"read_file a", "exec ls"})
	require.Equal(t, "↳ read_file a\n↳ exec ls\n", out.String())
}
