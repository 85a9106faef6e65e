// Package workers assembles Temporal workers: which workflows and
// activities run on which task queue, with which limits.
package workers

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/cron"
	"github.com/nanobot-durable/nanobot/mcp"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/stores"
	"github.com/nanobot-durable/nanobot/tools"
)

// Options say what this process runs.
type Options struct {
	Config *config.Config
	// Turns runs the turn workflows, their local activities and tool calls.
	Turns bool
	// Models runs the model calls (the LLM task queue).
	Models bool
	// Workspace: this process holds the workspace (its tools, prompt files,
	// Dream's edits) and polls the workspace queue. A process without it
	// never registers those activities, so it cannot run them by mistake.
	Workspace bool
	// DeliveryQueues run delivery for the channels in Channels: a channel's
	// shared queue (protocol.ChannelQueue) or this process's own queue.
	DeliveryQueues []string
	Channels       *channels.Manager
	Streams        *channels.StreamHub
	Log            *slog.Logger
	// OnReload is told of each config the watcher loads (the gateway's banner, new turns' settings).
	OnReload func(*config.Config)
	// StopTimeout bounds how long running activities may finish when the process stops.
	StopTimeout time.Duration
	// Identity names this process's pollers (empty: ProcessIdentity).
	Identity string
	// BuildID is the build the Web UI shows for each task (the binary's version); empty: the SDK's
	// 32-hex checksum, which every task-started and -completed event of a history then repeats.
	BuildID string
	// Namespace is the client's namespace (empty: "default"), for the resume scan.
	Namespace string
	// Stores is where the state is (nil: opened from Config, closed by Stop).
	Stores *stores.Set
	// Deployment opts into Worker Versioning (DeploymentEnv): the turn queue's
	// workers are the version Deployment:BuildID, and runs are pinned to it.
	Deployment string
}

// agentIdentityMark ends the poller identity of a `nanobot agent` process:
// such a process leaves once its turn is done, so its pollers, which the
// server still lists for a minute after, do not mean a worker serves the queue.
const agentIdentityMark = "@nanobot-agent"

// AgentIdentity is the poller identity of a `nanobot agent` process.
func AgentIdentity() string { return ProcessIdentity() + agentIdentityMark }

// IsAgentIdentity reports whether a poller belongs to a `nanobot agent` process.
func IsAgentIdentity(identity string) bool { return strings.HasSuffix(identity, agentIdentityMark) }

// Set is the running workers of one process.
type Set struct {
	workers []worker.Worker
	// polled is each worker's task queue and task type, for readiness.
	polled   []PolledQueue
	identity string
	fatal    fatalError
	Store    session.Store
	// Media is the process's media store, for the bus that shares inbound files.
	Media media.Store
	// Owner is the instance's owner key: the CLI seals its messages with it.
	Owner owner.Key
	mcp   *mcp.Pool
	// owned is the stores Start opened itself, closed by Stop.
	owned *stores.Set
	// stopWatch ends the config watcher.
	stopWatch func()
	// stopPromote ends the first versioned start's promotion (Worker Versioning).
	stopPromote func()
	// stopScan ends the resume scan if it still runs.
	stopScan func()
}

// NewActivities builds the activities' dependencies from the config, on
// the stores it names (kept open for the process); with a client, the
// message tool sends through Temporal. The MCP pool it returns must be
// closed when the process stops.
func NewActivities(cfg *config.Config, c client.Client, mgr *channels.Manager, hub *channels.StreamHub, log *slog.Logger) (activities.Deps, *mcp.Pool, error) {
	st, err := stores.Open(context.Background(), cfg, log)
	if err != nil {
		return activities.Deps{}, nil, err
	}
	return newActivities(cfg, st, true, c, mgr, hub, log)
}

// newActivities builds the deps; holdsWorkspace says where files fetched
// from the shared media store go (media.Dir).
func newActivities(cfg *config.Config, st *stores.Set, holdsWorkspace bool, c client.Client, mgr *channels.Manager, hub *channels.StreamHub, log *slog.Logger) (activities.Deps, *mcp.Pool, error) {
	if log == nil {
		log = slog.Default()
	}
	workspace := cfg.Agents.Defaults.WorkspacePath()
	warnSessionsDir(config.ConfigDir(cfg.Path), workspace, log)
	if w := WebSearchWarning(cfg); w != "" {
		log.Warn("config: " + w)
	}
	store := st.Sessions
	files := st.Media(cfg.Instance(), workspace, holdsWorkspace)
	var sender tools.MessageSender
	if c != nil {
		sender = &messageSender{client: c, instance: cfg.Instance(), media: files, attempts: cfg.TurnSettings().SendMaxRetries}
	}
	var jobs tools.CronJobs
	if c != nil {
		jobs = &cron.Service{Client: c, Instance: cfg.Instance()}
	}
	sb, err := sandboxFor(cfg, log)
	if err != nil {
		return activities.Deps{}, nil, err
	}
	sessions := execSessions(cfg)
	models := newConfigModels(cfg, log)
	var book tools.SessionBook
	if c != nil {
		book = activities.NewSessionBook(store, c, models.Config)
	}
	reg, err := newRegistry(cfg, sb, sessions, sender, activities.GoalStore{Store: store}, jobs, book, activities.NewSelf(store, models.Config, jobs))
	if err != nil {
		return activities.Deps{}, nil, err
	}
	pool := mcp.NewPool(cfg.Tools.MCPServers, log)
	pool.SetSandbox(sb) // the pool closes it, with the proxy exec shares
	refresh := func(ctx context.Context) {
		for _, err := range pool.Register(ctx, reg) {
			log.Warn("MCP server unavailable; its tools are left out of this turn", "error", err)
		}
	}
	deps := activities.Deps{
		RefreshTools: refresh, Config: models.Config,
		Store: store, Tools: reg, Models: models,
		Prompt: prompt.Builder{Workspace: workspace, BotName: cfg.Agents.Defaults.BotName,
			DisabledSkills: func() []string { return models.Config().Agents.Defaults.DisabledSkills }},
		Streams: hub, Channels: mgr, Workspace: workspace, ExecSessions: sessions,
		// As in nanobot, the sandbox confines the file tools too, where it is active.
		RestrictToWorkspace: cfg.Tools.RestrictToWorkspaceOrDefault() || sandboxActive(cfg, sb),
		Private:             privatePaths(cfg),
		MaxToolResultChars:  cfg.Agents.Defaults.MaxToolResultChars,
		Log:                 log,
		DreamTools:          tools.NewDreamRegistry(), Client: c,
		Usage: st.Usage, Archive: st.Archive, Pairing: st.Pairing, Media: files, Owner: st.Owner,
		ModelCallSlots: MaxConcurrentRequests(),
	}
	return deps, pool, nil
}

// deliveryStopTimeout lets a delivery still running when the process stops
// report its completion: a lost one keeps the turn open for the delivery's
// 2-minute StartToClose, and the next CLI of the session waits for it.
const deliveryStopTimeout = 10 * time.Second

// MaxConcurrentRequests is nanobot's NANOBOT_MAX_CONCURRENT_REQUESTS (default 3).
func MaxConcurrentRequests() int {
	if n, err := strconv.Atoi(os.Getenv("NANOBOT_MAX_CONCURRENT_REQUESTS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// Start registers and starts the workers the options ask for.
func Start(c client.Client, opts Options) (*Set, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Channels == nil {
		opts.Channels = channels.NewManager()
	}
	st, owned := opts.Stores, (*stores.Set)(nil)
	if st == nil {
		var err error
		if st, err = stores.Open(context.Background(), opts.Config, opts.Log); err != nil {
			return nil, err
		}
		owned = st
	}
	deps, pool, err := newActivities(opts.Config, st, opts.Workspace, c, opts.Channels, opts.Streams, opts.Log)
	if err != nil {
		if owned != nil {
			owned.Close()
		}
		return nil, err
	}
	features := Features(activities.New(deps))
	set := &Set{Store: deps.Store, Media: deps.Media, Owner: deps.Owner, mcp: pool, owned: owned}
	if models, ok := deps.Models.(*configModels); ok && opts.Config.Exists {
		ctx, cancel := context.WithCancel(context.Background())
		set.stopWatch = cancel
		go models.watchConfig(ctx, 2*time.Second, opts.Log, opts.OnReload)
	}
	if opts.Identity == "" {
		opts.Identity = ProcessIdentity()
	}
	if opts.BuildID != "" {
		// Without it the SDK's first worker start hashes the whole executable (~130 ms for 80 MB) to name the build.
		worker.SetBinaryChecksum(opts.BuildID)
	}
	inst := opts.Config.Instance()
	set.identity = opts.Identity
	add := func(queue string, o worker.Options, kind queueKind) {
		o.Identity, o.OnFatalError, o.BuildID = opts.Identity, set.fatal.set, opts.BuildID
		o.Interceptors = []interceptor.WorkerInterceptor{&activities.Liveness{}}
		// Each beat reaches the server: the SDK would otherwise hold them back to 80 % of the timeout.
		o.MaxHeartbeatThrottleInterval = activities.BeatInterval(protocol.HeartbeatTimeout)
		// A task left on the sticky queue of a worker that vanished moves to the shared queue this soon (SDK: 5 s).
		o.StickyScheduleToStartTimeout = protocol.HeartbeatTimeout
		if kind == turnQueue && opts.Deployment != "" && opts.BuildID != "" {
			o.DeploymentOptions = deploymentOptions(opts.Deployment, opts.BuildID)
		}
		w := worker.New(c, queue, o)
		set.polled = append(set.polled, PolledQueue{Name: queue, Type: register(w, features, kind, opts.Workspace)})
		set.workers = append(set.workers, w)
	}
	if opts.Turns {
		add(inst.TaskQueue(), worker.Options{WorkerStopTimeout: opts.StopTimeout}, turnQueue)
	}
	if opts.Models {
		add(inst.LLMTaskQueue(), worker.Options{MaxConcurrentActivityExecutionSize: MaxConcurrentRequests(), WorkerStopTimeout: opts.StopTimeout}, llmQueue)
	}
	if opts.Workspace {
		add(inst.WorkspaceQueue(), worker.Options{WorkerStopTimeout: opts.StopTimeout}, workspaceQueue)
	}
	for _, q := range opts.DeliveryQueues {
		add(q, worker.Options{WorkerStopTimeout: max(opts.StopTimeout, deliveryStopTimeout)}, deliveryQueue)
	}
	for i, w := range set.workers {
		if err := w.Start(); err != nil {
			for _, started := range set.workers[:i] {
				started.Stop()
			}
			pool.Close()
			if owned != nil {
				owned.Close()
			}
			return nil, fmt.Errorf("start worker: %w", err)
		}
	}
	if opts.Turns || opts.Models {
		set.stopScan = scanInBackground(c, opts.Namespace, inst, opts.Log)
	}
	if opts.Turns && opts.Deployment != "" && opts.BuildID != "" {
		ctx, cancel := context.WithCancel(context.Background())
		set.stopPromote = cancel
		go promoteIfNone(ctx, c, opts.Deployment, opts.BuildID, opts.Log)
	}
	return set, nil
}

// Stop stops every worker of the set, then the MCP servers it started.
func (s *Set) Stop() {
	if s.stopScan != nil {
		s.stopScan()
	}
	if s.stopWatch != nil {
		s.stopWatch()
	}
	if s.stopPromote != nil {
		s.stopPromote()
	}
	for _, w := range s.workers {
		w.Stop()
	}
	s.mcp.Close()
	if s.owned != nil {
		s.owned.Close()
	}
}

// warnSessionsDir says why a workspace's sessions may not be the ones the
// user expects: nanobot's id file is unusable, or sessions kept before
// nanobot named the workspace are left where they were.
func warnSessionsDir(configDir, workspace string, log *slog.Logger) {
	if _, err := session.WorkspaceID(workspace); err != nil {
		log.Warn("sessions: nanobot's workspace id is unusable; sessions are kept by the workspace path", "error", err)
	}
	if old := session.UnreadSessionsDir(configDir, workspace); old != "" {
		log.Warn("sessions: the workspace has nanobot's id now; earlier sessions are not read (move their files over to keep them)",
			"unread", old, "sessions", session.SessionsDir(configDir, workspace))
	}
}
