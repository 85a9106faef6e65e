// Command nanobot is a personal AI agent whose every turn is a durable
// Temporal workflow.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nanobot-durable/nanobot/channels"
	_ "github.com/nanobot-durable/nanobot/channels/all" // every channel of this build registers itself
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/secrets"
	"github.com/nanobot-durable/nanobot/stores"
)

const usage = `nanobot — a personal AI agent, made durable on Temporal

Usage:
  nanobot [--config FILE] <command> [flags]

Commands:
  onboard   write ~/.nanobot/config.json (if absent) and the workspace
  agent     talk to the agent: -m "text" for one turn, or an interactive prompt
  gateway   run the worker (and the enabled channels) until stopped;
            /health and /ready on gateway.host:gateway.port (or --health-addr)
  worker    run only the worker, to scale out against a Temporal cluster
            (--health-addr HOST:PORT serves /health and /ready)
  gateway install-service, worker install-service
            write a systemd user unit (--output FILE | --print)
  serve     run the worker and the OpenAI-compatible API (api.host:api.port)
  status    show config, workspace, provider, model, Temporal and disk use
  pairing   list | approve CODE | deny CODE | revoke ID: who may talk to the agent
  channels  status | login NAME [--force]: every channel, and a channel's QR login
  turn      list | show <session|workflow id>: what a turn did, state by state
  setup-temporal  register nanobot's search attributes on an external cluster
  usage     token usage by day and model, and by session (--days N, --json)
  cron      list | add | remove ID | run ID: jobs kept as Temporal Schedules
  db        migrate | status | import: the PostgreSQL store (database.url)
  trigger   <id> ["message"]: deliver a message to the chat a /trigger is bound to (stdin when omitted)
  mcp       login <server>: OAuth login to a remote MCP server ("auth": "oauth"); prints the URL
  cli-apps  list | catalog | install NAME | update NAME | uninstall NAME: the CLI apps run_cli_app runs
  deployment [status] | promote [BUILD]: Worker Versioning's versions (NANOBOT_WORKER_DEPLOYMENT)
  gc        remove old media, stale cache copies and idle archived sessions
            now (retention.* in the config; --json); the gateway runs it daily
  version   print the version (also --version)

Global flags: --config FILE, --log-format text|json (NANOBOT_LOG_FORMAT)

Environment:
  NANOBOT_CONFIG       config file (default ~/.nanobot/config.json)
  TEMPORAL_ADDRESS     an external Temporal frontend (default: the embedded
                       temporal-dev on 127.0.0.1:7233, started when absent)
  TEMPORAL_NAMESPACE   namespace (default "default")
  OPENAI_API_KEY, OPENAI_BASE_URL   fallbacks for providers.openai
  NANOBOT_DATABASE_URL keep the state in PostgreSQL (postgres://…) instead of
                       the files under the home; wins over database.url
  NANOBOT_HEALTH_ADDR  --health-addr for gateway, worker and serve
  NANOBOT_PPROF        serve net/http/pprof on this loopback address (e.g. 127.0.0.1:6060)
  NANOBOT_WORKER_DEPLOYMENT  opt into Worker Versioning under this deployment name:
                       turns are pinned to the build that began them (README "Upgrading")
`

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// app is what every command gets.
type app struct {
	configPath string
	stdin      io.Reader
	stdout     io.Writer
	stderr     io.Writer
	log        *slog.Logger
	secrets    *secrets.Set // the config's keys and tokens, and those channels fetch
	// warnings are the last loaded config's (status lists the unsupported ones).
	warnings []config.Warning
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	global := flag.NewFlagSet("nanobot", flag.ContinueOnError)
	global.SetOutput(stderr)
	global.Usage = func() { fmt.Fprint(stderr, usage) }
	cfgPath := global.String("config", "", "config file")
	showVersion := global.Bool("version", false, "print the version")
	logFormat := global.String("log-format", envOr("NANOBOT_LOG_FORMAT", "text"), "log format: text or json")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	rest := global.Args()
	if *showVersion {
		fmt.Fprintln(stdout, "nanobot", version)
		return 0
	}
	if len(rest) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if *logFormat != "text" && *logFormat != "json" {
		fmt.Fprintf(stderr, "nanobot: --log-format must be text or json, got %q\n", *logFormat)
		return 2
	}
	a := &app{configPath: *cfgPath, stdin: stdin, stdout: stdout, stderr: stderr, log: newLogger(stderr, *logFormat)}
	startPprof(a.log)
	// The agent handles Ctrl-C itself: the first stops the running turn.
	sigs := []os.Signal{syscall.SIGTERM}
	if rest[0] != "agent" {
		sigs = append(sigs, os.Interrupt)
	}
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	defer stop()
	cmds := map[string]func(context.Context, []string) error{
		"onboard": a.onboard, "agent": a.agent, "gateway": a.gateway, "worker": a.worker, "serve": a.serve, "status": a.status,
		"pairing": a.pairing, "channels": a.channelsCmd, "usage": a.usageCmd, "turn": a.turn, "cron": a.cron,
		"setup-temporal": a.setupTemporal, "deployment": a.deployment, "db": a.db, "trigger": a.trigger, "gc": a.gcCmd, "mcp": a.mcpCmd, "cli-apps": a.cliAppsCmd,
		"version": func(context.Context, []string) error { fmt.Fprintln(stdout, "nanobot", version); return nil },
	}
	cmd, ok := cmds[rest[0]]
	if !ok {
		if rest[0] == "help" {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "nanobot: unknown command %q (see nanobot --help)\n", rest[0])
		return 2
	}
	if err := cmd(ctx, rest[1:]); err != nil {
		if r, ok := asRestart(err); ok {
			stop() // the next process handles the signals
			fmt.Fprintln(stdout, "restarting…")
			if err = restartProcess(r, os.Stderr); err == nil {
				return 0 // spawned: the new gateway runs on
			}
		}
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, "nanobot:", oneLine(err.Error()))
			return 2
		}
		fmt.Fprintln(stderr, "nanobot:", oneLine(err.Error()))
		return 1
	}
	return 0
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ error }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// newLogger logs to stderr at NANOBOT_LOG_LEVEL (default warn, so replies stay readable).
func newLogger(w io.Writer, format string) *slog.Logger {
	level := slog.LevelWarn
	_ = level.UnmarshalText([]byte(envOr("NANOBOT_LOG_LEVEL", "warn")))
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// flags makes a command's flag set; --config is accepted after the command too.
func (a *app) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("nanobot "+name, flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	fs.Func("config", "config file", func(v string) error { a.configPath = v; return nil })
	return fs
}

func (a *app) parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}

// openStores loads the config and opens the stores it names; the caller closes them.
func (a *app) openStores(ctx context.Context) (*config.Config, *stores.Set, error) {
	cfg, err := a.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	st, err := stores.Open(ctx, cfg, a.log)
	if err != nil {
		return nil, nil, err
	}
	return cfg, st, nil
}

// loadConfig reads the config and logs its warnings.
func (a *app) loadConfig() (*config.Config, error) {
	path := a.configPath
	if path == "" {
		path = config.DefaultPath()
	}
	cfg, warnings, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	// From here on no log line carries a configured key or token.
	a.secrets = secrets.FromEnv(cfg)
	a.secrets.Add(pgstore.Password(cfg.Database.URL))
	a.log = slog.New(secrets.Handler(a.log.Handler(), a.secrets))
	slog.SetDefault(a.log)
	more, err := channels.CheckConfig(cfg)
	a.warnings = append(warnings, more...)
	for _, w := range a.warnings {
		a.log.Warn("config: " + w.String())
	}
	if err != nil {
		return nil, err
	}
	return cfg, nil
}
