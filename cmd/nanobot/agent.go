package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/workers"
)

// runtimeEnv is a connected process: Temporal, workers and the CLI channel.
type runtimeEnv struct {
	cfg     *config.Config
	conn    *temporalConn
	workers *workers.Set
	bus     *channels.Bus
	hub     *channels.StreamHub
	cli     *channels.CLI
	queue   string
}

func (r *runtimeEnv) Close() {
	if r.workers != nil {
		r.workers.Stop()
	}
	r.conn.Close()
}

func randomID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// startRuntime connects to Temporal and runs the workers this command needs.
func (a *app) startRuntime(ctx context.Context, cfg *config.Config, opts workers.Options) (*runtimeEnv, error) {
	conn, err := connectTemporal(ctx, config.ConfigDir(cfg.Path), a.log)
	if err != nil {
		return nil, err
	}
	r := &runtimeEnv{cfg: cfg, conn: conn, hub: channels.NewStreamHub()}
	opts.Config, opts.Streams, opts.Log = cfg, r.hub, a.log
	if opts.Channels == nil {
		opts.Channels = channels.NewManager()
	}
	r.workers, err = workers.Start(conn.Client, opts)
	if err != nil {
		conn.Close()
		return nil, err
	}
	r.bus = &channels.Bus{Client: conn.Client, Settings: workers.Settings(cfg)}
	return r, nil
}

// agent runs one turn (-m) or an interactive prompt in the CLI channel.
func (a *app) agent(ctx context.Context, args []string) error {
	fs := a.flags("agent")
	message := fs.String("m", "", "message to send (omit for an interactive prompt)")
	fs.StringVar(message, "message", "", "same as -m")
	sessionKey := fs.String("s", "cli:direct", "session key (channel:chat_id)")
	fs.StringVar(sessionKey, "session", "cli:direct", "same as -s")
	showReasoning := fs.Bool("show-reasoning", false, "show the model's reasoning, dimmed, while it streams")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	_, chatID, err := protocol.SplitSessionKey(*sessionKey)
	if err != nil {
		return usageError{err}
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	m := cfg.ActiveModel()
	if _, err := providers.Resolve(cfg, m); err != nil {
		return err
	}
	cli := channels.NewCLI(a.stdout)
	cli.QuietErrors = *message != ""
	cli.ShowReasoning = *showReasoning
	mgr := channels.NewManager()
	mgr.Add(cli)
	queue := "nanobot-cli-" + randomID()
	r, err := a.startRuntime(ctx, cfg, workers.Options{Turns: true, Models: true, DeliveryQueues: []string{queue}, Channels: mgr})
	if err != nil {
		return err
	}
	defer r.Close()
	r.cli, r.queue = cli, queue
	defer r.hub.Subscribe(*sessionKey, cli.Draw)()
	send := func(text string) (channels.Reply, error) {
		return r.turn(ctx, protocol.Inbound{
			ID: randomID(), SessionKey: *sessionKey, Content: text, SentAt: time.Now(),
			Route: protocol.Route{Channel: "cli", ChatID: chatID, SenderID: "user", Queue: queue},
		})
	}
	if *message != "" {
		reply, err := send(*message)
		if err != nil {
			return err
		}
		if reply.StopReason == protocol.StopError {
			return fmt.Errorf("model call failed: %s", reply.Text)
		}
		return nil
	}
	return a.interactive(ctx, send)
}

// turn publishes one message and waits for its reply, or for the turn to fail.
func (r *runtimeEnv) turn(ctx context.Context, msg protocol.Inbound) (channels.Reply, error) {
	stopReply, err := r.bus.Publish(ctx, msg)
	if err != nil {
		return channels.Reply{}, err
	}
	if stopReply != "" {
		fmt.Fprintln(r.cli.Out, stopReply)
		return channels.Reply{Text: stopReply}, nil
	}
	failed := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		run := r.conn.Client.GetWorkflow(wctx, protocol.TurnWorkflowID(msg.SessionKey), "")
		failed <- run.Get(wctx, nil)
	}()
	var last *channels.Reply // what this turn showed: its reply, or a message tool send that stood in for it
	for {
		select {
		case reply := <-r.cli.Replies():
			if reply.StopReason == channels.KindMessage && reply.SessionKey == msg.SessionKey {
				last = &reply
			}
			if slices.Contains(reply.MessageIDs, msg.ID) {
				// Stay until the run closes: its last workflow task needs this process's worker.
				select {
				case <-failed:
				case <-time.After(10 * time.Second):
				case <-ctx.Done():
				}
				return reply, nil
			}
		case err := <-failed:
			if err != nil && ctx.Err() == nil {
				return channels.Reply{}, fmt.Errorf("turn %s failed: %w", protocol.TurnWorkflowID(msg.SessionKey), err)
			}
			select { // the run ended well: its delivery is at most a moment behind
			case reply := <-r.cli.Replies():
				if slices.Contains(reply.MessageIDs, msg.ID) {
					return reply, nil
				}
			case <-time.After(2 * time.Second):
				if last != nil {
					r.cli.EndTurn()
					return *last, nil // the message tool answered; the final reply was not sent twice
				}
				return channels.Reply{}, errors.New("the turn finished but its reply was not delivered")
			}
		case <-ctx.Done():
			return channels.Reply{}, ctx.Err()
		}
	}
}

// interactive reads a line, shows the streamed reply, until Ctrl-D.
func (a *app) interactive(ctx context.Context, send func(string) (channels.Reply, error)) error {
	fmt.Fprintln(a.stdout, "🐈 nanobot — type a message, Ctrl-D to quit")
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(a.stdin)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for {
		fmt.Fprint(a.stdout, "\nYou: ")
		select {
		case <-ctx.Done():
			fmt.Fprintln(a.stdout)
			return nil
		case line, ok := <-lines:
			if !ok {
				fmt.Fprintln(a.stdout)
				return nil
			}
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if line == "exit" || line == "quit" {
				return nil
			}
			fmt.Fprint(a.stdout, "🐈 ")
			if _, err := send(line); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				fmt.Fprintln(a.stderr, "error:", oneLine(err.Error()))
			}
		}
	}
}
