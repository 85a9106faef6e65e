package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/secrets"
	"github.com/nanobot-durable/nanobot/workers"
	"github.com/nanobot-durable/nanobot/workflows"
)

// runtimeEnv is a connected process: Temporal, workers and the hub.
type runtimeEnv struct {
	cfg     *config.Config
	conn    *temporalConn
	workers *workers.Set
	bus     *channels.Bus
	hub     *channels.StreamHub

	mu    sync.Mutex
	extra []*workers.Set // started later (a thin CLI whose gateway went away)
}

func (r *runtimeEnv) Close() {
	r.mu.Lock()
	for _, s := range r.extra {
		s.Stop()
	}
	r.mu.Unlock()
	if r.workers != nil {
		r.workers.Stop()
	}
	r.conn.Close()
}

func (r *runtimeEnv) addWorkers(s *workers.Set) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.extra = append(r.extra, s)
}

func randomID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// startRuntime connects to Temporal and runs the workers this command needs.
func (a *app) startRuntime(ctx context.Context, cfg *config.Config, opts workers.Options) (*runtimeEnv, error) {
	conn, err := connectTemporal(ctx, cfg, a.log)
	if err != nil {
		return nil, err
	}
	r := &runtimeEnv{cfg: cfg, conn: conn, hub: channels.NewStreamHub()}
	if err := r.startWorkers(opts, a.log); err != nil {
		conn.Close()
		return nil, err
	}
	return r, nil
}

func (r *runtimeEnv) startWorkers(opts workers.Options, log *slog.Logger) error {
	opts.Config, opts.Streams, opts.Log, opts.Namespace, opts.BuildID = r.cfg, r.hub, log, r.conn.Namespace, version
	opts.Deployment = os.Getenv(workers.DeploymentEnv)
	if opts.Channels == nil {
		opts.Channels = channels.NewManager()
	}
	set, err := workers.Start(r.conn.Client, opts)
	if err != nil {
		return err
	}
	r.workers = set
	r.bus = &channels.Bus{Client: r.conn.Client, Settings: r.cfg.TurnSettings(), Instance: r.cfg.Instance(), LocalWorker: opts.Turns,
		Media: set.Media}
	return nil
}

// agent runs one turn (-m) or an interactive prompt in the CLI channel.
// When a gateway or worker already serves this namespace, it is a thin
// client: it runs only its own delivery queue, never other sessions' work.
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
	if _, err := providers.Resolve(cfg, cfg.ActiveModel()); err != nil {
		return err
	}
	// The SDK's and the workers' log lines go to a file, not into the conversation.
	log, closeLog := agentLogger(config.ConfigDir(cfg.Path), a.log)
	defer closeLog()
	log = slog.New(secrets.Handler(log.Handler(), a.secrets)) // loadConfig collected them
	conn, err := connectTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	r := &runtimeEnv{cfg: cfg, conn: conn, hub: channels.NewStreamHub()}
	defer r.Close()

	cli := channels.NewCLI(a.stdout)
	cli.QuietErrors, cli.ShowReasoning, cli.Plain = *message != "", *showReasoning, !isTerminal(a.stdout)
	mgr := channels.NewManager()
	mgr.Add(cli)
	queue := "nanobot-cli-" + randomID()
	thin := workersServing(ctx, conn, cfg.Instance())
	if !thin { // this process runs the tools: say now if their sandbox cannot run
		a.sandboxStatus(a.stderr, cfg)
	}
	opts := workers.Options{DeliveryQueues: []string{queue}, Channels: mgr, Turns: !thin, Models: !thin, Workspace: !thin, Identity: workers.AgentIdentity()}
	if err := r.startWorkers(opts, log); err != nil {
		return err
	}
	s := &cliSession{
		app: a, r: r, cli: cli, queue: queue, log: log, opts: opts,
		route: protocol.Route{Channel: "cli", ChatID: chatID, SenderID: "user", Queue: queue},
		key:   *sessionKey,
	}
	s.thin.Store(thin)
	log.Info("agent started", "session", *sessionKey, "thin_client", thin, "queue", queue)
	defer r.hub.Subscribe(*sessionKey, cli.Draw)()
	interrupts := make(chan os.Signal, 2)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)
	s.interrupts = interrupts

	if *message == "" {
		s.input = newPrompter(s.newLineReader())
		defer s.input.Close()
	}
	if err := s.catchUp(ctx); err != nil {
		return err
	}
	if *message != "" {
		reply, err := s.send(ctx, *message)
		if err != nil {
			return err
		}
		switch reply.StopReason {
		case protocol.StopError:
			return fmt.Errorf("model call failed: %s", reply.Text)
		case protocol.StopFailed:
			return errors.New("the turn failed (its reply says why)") // a script sees it in the exit code
		}
		return nil
	}
	return s.interactive(ctx)
}

// workersServing tells whether a gateway or worker polls the turn queue now.
// Pollers of other `nanobot agent` processes do not count: the server lists
// them for a minute after such a CLI left, and a CLI that counted them
// waited 10 s for a worker that was gone.
func workersServing(ctx context.Context, conn *temporalConn, inst protocol.Instance) bool {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	live, err := workers.LivePollers(dctx, conn.Client, inst.TaskQueue(), enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(live, func(id string) bool { return !workers.IsAgentIdentity(id) })
}

// agentLogger writes log lines to <config dir>/logs/agent.log, so neither
// the SDK's nor the workers' messages land in the conversation.
func agentLogger(configDir string, fallback *slog.Logger) (*slog.Logger, func()) {
	dir := filepath.Join(configDir, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fallback, func() {}
	}
	f, err := os.OpenFile(filepath.Join(dir, "agent.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fallback, func() {}
	}
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(envOr("NANOBOT_LOG_LEVEL", "info")))
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level})), func() { f.Close() }
}

// isTerminal reports whether w is a terminal (then progress lines are dimmed).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// catchUp shows what this session said while no CLI was there: it waits for
// a turn still running (a CLI closed mid-turn), then prints the replies that
// found their CLI gone, from the journal.
func (s *cliSession) catchUp(ctx context.Context) error {
	id := s.r.cfg.Instance().TurnWorkflowID(s.key)
	desc, err := s.r.conn.Client.DescribeWorkflowExecution(ctx, id, "")
	if err == nil && desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		st, ok := s.turnState(ctx, id)
		switch {
		case ok && st.Waiting != nil: // waiting for a person, maybe for days: answer it, or send the answer
			if err := s.catchUpWaiting(ctx, *st.Waiting); err != nil {
				return err
			}
		case ok && st.State == string(workflows.Done): // only closing: a message now goes to the next run
		default:
			fmt.Fprintln(s.app.stdout, "… a turn of this session is still running; its reply follows (Ctrl-C stops it)")
			if _, err := s.wait(ctx, protocol.Inbound{SessionKey: s.key}); err != nil && !errors.Is(err, errStopped) {
				return err
			}
		}
	}
	texts, err := activities.TakeUndelivered(ctx, s.r.workers.Store, s.key, s.route.Channel, s.route.ChatID)
	if err != nil {
		return fmt.Errorf("read undelivered replies of %s: %w", s.key, err)
	}
	for _, t := range texts {
		fmt.Fprintf(s.app.stdout, "🐈 (while you were away) %s\n", t)
	}
	return nil
}
