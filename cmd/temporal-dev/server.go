package main

import (
	"fmt"
	"google.golang.org/protobuf/types/known/durationpb"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/headers"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/metrics"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// clusterName is the single local cluster's name; persisted in the DB, so it must stay stable.
const clusterName = "active"

// endpoints are the resolved listen/dial addresses of one run.
type endpoints struct {
	frontendDial string // host:port that local clients (system worker, UI, bootstrap) dial
	httpPort     int
	history      int
	matching     int
	worker       int
}

// devTaskWorkers is the size of each history task scheduler: the server's 512 suit a cluster's
// many shards, not one shard on a laptop, where they cost memory and contention.
const devTaskWorkers = 16

// The history caches' sizes: mutable states kept, and events kept per shard (see defaultDynamicConfig).
const (
	devHistoryCache     = 64
	devEventsCacheBytes = 64 << 10
)

// defaultDynamicConfig returns the dev-server defaults; --dynamic-config-value entries override them.
// httpURL is the frontend's HTTP API ("" = off) and httpHosts the Host names it answers to.
func defaultDynamicConfig(httpURL string, httpHosts []string) map[string]any {
	dc := map[string]any{
		// The default 20/s on a single shard adds ~45 ms of latency per workflow task.
		"history.transferProcessorMaxPollRPS": 1000,
		// Same reasoning for timers and visibility: one shard means one slow poller.
		"history.timerProcessorMaxPollRPS":      1000,
		"history.visibilityProcessorMaxPollRPS": 1000,
		// One matching host: more partitions only spread one queue's tasks over forwarding hops.
		"matching.numTaskqueueReadPartitions":             1,
		"matching.numTaskqueueWritePartitions":            1,
		"history.transferProcessorSchedulerWorkerCount":   devTaskWorkers,
		"history.timerProcessorSchedulerWorkerCount":      devTaskWorkers,
		"history.visibilityProcessorSchedulerWorkerCount": devTaskWorkers,
		// Timers and activity retries fire within 100 ms of their time, not up to 1 s late.
		"history.timerProcessorMaxTimeShift": 100 * time.Millisecond,
		// Otherwise a continued-as-new or re-started workflow ID waits 1 s.
		"history.workflowIdReuseMinimalInterval": time.Duration(0),
		// A workflow task held by a worker that vanished is retried elsewhere after 4 s, not 10 s:
		// within the 5 s worst case, with room for a long replay on a loaded host (2.1 s measured).
		"history.defaultWorkflowTaskTimeout":  4 * time.Second,
		"system.enableActivityEagerExecution": true,
		// Search attributes added at startup must be usable right away.
		"system.forceSearchAttributesCacheRefreshOnRead": true,
		// A personal agent's open workflows are a handful: the server's defaults (128 000
		// mutable states, 512 KiB of events per shard) hold B4's 600 closed runs' state in the heap
		// for an hour; at 64 and 64 KiB the peak heap under B4 is ~25 MB smaller.
		"history.hostLevelCacheMaxSize":   devHistoryCache,
		"history.eventsCacheMaxSizeBytes": devEventsCacheBytes,
	}
	if httpURL != "" {
		// Nexus async completions call back into this server's HTTP API.
		dc["component.nexusoperations.callback.endpoint.template"] = httpURL + "/namespaces/{{.NamespaceName}}/nexus/callback"
		// The server's own DNS rebinding guard (403; it matches Host with its port).
		dc["frontend.httpAllowedHosts"] = httpHosts
	}
	return dc
}

// buildDynamicConfig merges defaults with the user's values into a static client; a null value
// removes the key, so the server's own default applies.
func buildDynamicConfig(defaults map[string]any, overrides []dynamicConfigValue) dynamicconfig.StaticClient {
	client := dynamicconfig.StaticClient{}
	for k, v := range defaults {
		client[dynamicconfig.MakeKey(k)] = v
	}
	for _, o := range overrides {
		if o.Value == nil {
			delete(client, dynamicconfig.MakeKey(o.Key))
			continue
		}
		client[dynamicconfig.MakeKey(o.Key)] = o.Value
	}
	return client
}

// freePorts asks the OS for n distinct free ports on 127.0.0.1, holding all listeners until
// every port is chosen so that one call never returns the same port twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// checkListen fails early with a clear message if a fixed port is taken, instead of the
// server or UI exiting from deep inside with a fatal log line.
func checkListen(what, ip string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("%s port %d on %s is not available: %w", what, port, ip, err)
	}
	return l.Close()
}

// dialHost is the address local clients use to reach a service bound to ip.
func dialHost(ip string) string {
	if parsed := net.ParseIP(ip); parsed != nil && parsed.IsUnspecified() {
		if parsed.To4() == nil {
			return "::1"
		}
		return "127.0.0.1"
	}
	return ip
}

func resolveEndpoints(o *options) (*endpoints, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	return &endpoints{
		frontendDial: net.JoinHostPort(dialHost(o.IP), strconv.Itoa(o.Port)),
		httpPort:     o.HTTPPort,
		history:      ports[0],
		matching:     ports[1],
		worker:       ports[2],
	}, nil
}

// sqlConfig builds the SQLite datastore config; file DBs get WAL defaults, user pragmas win.
func sqlConfig(o *options) (*config.SQL, error) {
	cfg := &config.SQL{
		PluginName:        sqliteplugin.PluginName,
		ConnectAttributes: map[string]string{},
	}
	if o.DBFilename == "" {
		cfg.ConnectAttributes["mode"] = "memory"
		cfg.ConnectAttributes["cache"] = "shared"
		// A unique name keeps shared-cache memory DBs of parallel servers in one process apart.
		cfg.DatabaseName = fmt.Sprintf("temporal-dev-%d-%d", os.Getpid(), time.Now().UnixNano())
	} else {
		path, err := filepath.Abs(o.DBFilename)
		if err != nil {
			return nil, fmt.Errorf("resolving --db-filename %q: %w", o.DBFilename, err)
		}
		if strings.ContainsAny(path, "?#") {
			return nil, fmt.Errorf("--db-filename %q: '?' and '#' are not allowed in the path", o.DBFilename)
		}
		cfg.DatabaseName = path
		cfg.ConnectAttributes["mode"] = "rwc"
		cfg.ConnectAttributes["journal_mode"] = "wal"
		cfg.ConnectAttributes["synchronous"] = "normal"
		// A checkpoint leaves the WAL at its high-water mark unless told to truncate it back.
		cfg.ConnectAttributes["journal_size_limit"] = strconv.Itoa(walSizeLimit)
	}
	for _, p := range o.Pragmas {
		cfg.ConnectAttributes[p.Name] = p.Value
	}
	if o.SQLiteMaxConns > 1 && !strings.EqualFold(cfg.ConnectAttributes["journal_mode"], "wal") {
		return nil, fmt.Errorf("--sqlite-max-conns %d needs journal_mode=wal, not %q (--sqlite-pragma journal_mode)", o.SQLiteMaxConns, cfg.ConnectAttributes["journal_mode"])
	}
	cfg.MaxConns, cfg.MaxIdleConns = o.SQLiteMaxConns, o.SQLiteMaxConns
	return cfg, nil
}

// visibilitySQLConfig is where visibility lives: history's own database unless
// --sqlite-visibility-file gives it a file of its own (so its writes stop queueing behind history's).
func visibilitySQLConfig(o *options, history *config.SQL) (*config.SQL, error) {
	if o.VisibilityFile == "" {
		return history, nil
	}
	path, err := filepath.Abs(o.VisibilityFile)
	if err != nil {
		return nil, fmt.Errorf("resolving --sqlite-visibility-file %q: %w", o.VisibilityFile, err)
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("--sqlite-visibility-file %q: '?' and '#' are not allowed in the path", o.VisibilityFile)
	}
	if path == history.DatabaseName {
		return nil, fmt.Errorf("--sqlite-visibility-file %q is --db-filename itself", o.VisibilityFile)
	}
	vis := *history
	vis.ConnectAttributes = maps.Clone(history.ConnectAttributes)
	vis.DatabaseName = path
	return &vis, nil
}

// walSizeLimit is what a checkpoint truncates the WAL back to (64 MiB); --sqlite-pragma journal_size_limit overrides it.
const walSizeLimit = 64 << 20

// prepareDatabase creates the DB files' directories and schemas on first use, then pre-registers
// namespaces so they exist before the frontend's namespace cache first loads.
func prepareDatabase(o *options, sqlCfg, visCfg *config.SQL, logger *slog.Logger) error {
	created := true // in-memory DBs get their schema from the plugin when the first connection opens
	if o.DBFilename != "" {
		for _, cfg := range []*config.SQL{sqlCfg, visCfg} {
			if _, err := compactSQLite(cfg.DatabaseName, o.VacuumFreePercent, logger); err != nil {
				return err
			}
			if visCfg == sqlCfg {
				break
			}
		}
		var err error
		if created, err = setupSQLiteFile(sqlCfg, logger); err != nil {
			return err
		}
		if visCfg != sqlCfg { // the schema comes whole (history tables left empty): the plugin has no visibility-only setup
			if created, err = setupSQLiteFile(visCfg, logger); err != nil {
				return err
			}
		}
	}
	nsConfigs, err := preRegisterNamespaces(o, sqlCfg)
	if err != nil {
		return err
	}
	// Only a schema made just now is trimmed: an existing database keeps the indexes it has.
	if created && o.LeanVisibility {
		if err := dropUnqueriedVisibilityIndexes(visCfg, aliasedFields(nsConfigs)); err != nil {
			return err
		}
		logger.Debug("visibility schema without the indexes nanobot never queries", "db", visCfg.DatabaseName)
	}
	return nil
}

// setupSQLiteFile makes cfg's directory and schema; false when the file already had one.
func setupSQLiteFile(cfg *config.SQL, logger *slog.Logger) (created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(cfg.DatabaseName), 0o755); err != nil {
		return false, fmt.Errorf("creating directory for %s: %w", cfg.DatabaseName, err)
	}
	// Schema statements start with CREATE TABLE, so an existing DB fails on the first one.
	if err := sqliteschema.SetupSchema(cfg); err != nil {
		if !isAlreadyExists(err) {
			return false, fmt.Errorf("setting up SQLite schema in %s: %w", cfg.DatabaseName, err)
		}
		logger.Debug("reusing existing SQLite schema", "db", cfg.DatabaseName)
		return false, nil
	}
	logger.Debug("created SQLite schema", "db", cfg.DatabaseName)
	return true, nil
}

// preRegisterNamespaces writes the namespaces, with their search attributes, into the store
// before start, so they exist when the frontend first serves; one already there is kept. The
// helper is sqliteschema's but writes through the generic SQL layer, so PostgreSQL takes it too.
func preRegisterNamespaces(o *options, sqlCfg *config.SQL) ([]*sqliteschema.NamespaceConfig, error) {
	sas := map[string]enumspb.IndexedValueType{}
	for _, sa := range o.SearchAttributes {
		sas[sa.Name] = sa.Type
	}
	nsConfigs := make([]*sqliteschema.NamespaceConfig, 0, len(o.Namespaces))
	for _, ns := range o.Namespaces {
		nsCfg, err := sqliteschema.NewNamespaceConfig(clusterName, ns, false, sas)
		if err != nil {
			return nil, fmt.Errorf("namespace %q: %w", ns, err)
		}
		nsCfg.Detail.Config.Retention = durationpb.New(o.Retention)
		nsConfigs = append(nsConfigs, nsCfg)
	}
	if err := sqliteschema.CreateNamespaces(sqlCfg, nsConfigs...); err != nil {
		return nil, fmt.Errorf("registering namespaces: %w", err)
	}
	return nsConfigs, nil
}

func isAlreadyExists(err error) bool {
	return err != nil && strings.Contains(err.Error(), "already exists")
}

// prepareStores sets up the database the server persists to: PostgreSQL with --db, else SQLite.
func prepareStores(o *options, logger log.Logger, slogger *slog.Logger) (config.Persistence, error) {
	if o.Postgres != nil {
		if err := preparePostgres(o.Postgres, logger); err != nil {
			return config.Persistence{}, err
		}
		if _, err := preRegisterNamespaces(o, postgresSQLConfig(o.Postgres, o.Postgres.Database)); err != nil {
			return config.Persistence{}, fmt.Errorf("--db: %w", err)
		}
		return postgresPersistence(o.Postgres), nil
	}
	sqlCfg, err := sqlConfig(o)
	if err != nil {
		return config.Persistence{}, err
	}
	visCfg, err := visibilitySQLConfig(o, sqlCfg)
	if err != nil {
		return config.Persistence{}, err
	}
	if err := prepareDatabase(o, sqlCfg, visCfg, slogger); err != nil {
		return config.Persistence{}, err
	}
	p := config.Persistence{
		DefaultStore:     sqliteplugin.PluginName,
		VisibilityStore:  sqliteplugin.PluginName,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{sqliteplugin.PluginName: {SQL: sqlCfg}},
	}
	if visCfg != sqlCfg {
		p.VisibilityStore = sqliteplugin.PluginName + "-visibility"
		p.DataStores[p.VisibilityStore] = config.DataStore{SQL: visCfg}
	}
	return p, nil
}

// httpAddr is where the frontend's HTTP API listens, "" when it is off.
func (ep *endpoints) httpAddr(o *options) string {
	if ep.httpPort == 0 {
		return ""
	}
	return net.JoinHostPort(dialHost(o.IP), strconv.Itoa(ep.httpPort))
}

// serverConfig assembles the full server config for a single-process, single-shard cluster.
func serverConfig(o *options, ep *endpoints, persistence config.Persistence, frontendTLS *frontendTLS) *config.Config {
	httpAddr := ep.httpAddr(o)
	internal := func(port int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: "127.0.0.1"}}
	}
	cfg := &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: "127.0.0.1"},
			TLS:        frontendTLS.rootTLS(),
		},
		Persistence: persistence,
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             ep.frontendDial,
				HTTPAddress:            httpAddr,
			}},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services: map[string]config.Service{
			string(primitives.FrontendService): {RPC: config.RPC{GRPCPort: o.Port, HTTPPort: ep.httpPort, BindOnIP: o.IP}},
			string(primitives.HistoryService):  internal(ep.history),
			string(primitives.MatchingService): internal(ep.matching),
			string(primitives.WorkerService):   internal(ep.worker),
		},
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
			History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
			Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
		}},
		// The system worker dials the frontend through this address.
		PublicClient: config.PublicClient{HostPort: ep.frontendDial, HTTPHostPort: httpAddr},
	}
	if o.MetricsPort != 0 {
		cfg.Global.Metrics = &metrics.Config{Prometheus: &metrics.PrometheusConfig{
			Framework:     metrics.FrameworkOpentelemetry,
			ListenAddress: net.JoinHostPort(o.IP, strconv.Itoa(o.MetricsPort)),
			HandlerPath:   "/metrics",
		}}
	}
	return cfg
}

// staticHosts pins every service to its own address, so no membership (ringpop) ports are needed.
func staticHosts(o *options, ep *endpoints) map[primitives.ServiceName]static.Hosts {
	local := func(port int) static.Hosts {
		return static.SingleLocalHost(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	return map[primitives.ServiceName]static.Hosts{
		primitives.FrontendService: static.SingleLocalHost(ep.frontendDial),
		primitives.HistoryService:  local(ep.history),
		primitives.MatchingService: local(ep.matching),
		primitives.WorkerService:   local(ep.worker),
	}
}

// serverLogger is the server's zap logger on stderr (stdout is kept for the ready line) with a
// level that can be raised at shutdown.
type serverLogger struct {
	log.Logger
	level zap.AtomicLevel
}

func newServerLogger(o *options) (*serverLogger, error) {
	encoding := "console"
	if o.LogFormat == "json" {
		encoding = "json"
	}
	level := zap.NewAtomicLevelAt(log.ParseZapLevel(o.LogLevel))
	zl, err := zap.Config{
		Level:             level,
		Encoding:          encoding,
		EncoderConfig:     log.DefaultZapEncoderConfig,
		OutputPaths:       []string{"stderr"},
		ErrorOutputPaths:  []string{"stderr"},
		DisableStacktrace: o.LogLevel != "debug", // stack traces drown a dev console
	}.Build()
	if err != nil {
		return nil, fmt.Errorf("building logger: %w", err)
	}
	return &serverLogger{Logger: log.NewZapLogger(zl), level: level}, nil
}

// quietShutdown hides the expected warn-level noise (closed connections, failed polls) of a
// stop, unless the user asked for info or debug logs.
func (l *serverLogger) quietShutdown() {
	if l.level.Level() >= zapcore.WarnLevel {
		l.level.SetLevel(zapcore.ErrorLevel)
	}
}

// newTemporalServer validates fixed ports, prepares the DB and constructs (not starts) the server.
func newTemporalServer(o *options, ep *endpoints, frontendTLS *frontendTLS, logger log.Logger, slogger *slog.Logger) (temporal.Server, error) {
	if err := checkListen("frontend", o.IP, o.Port); err != nil {
		return nil, err
	}
	if !o.Headless {
		if err := checkListen("UI", o.UIIP, o.UIPort); err != nil {
			return nil, err
		}
	}
	if o.HTTPPort != 0 {
		if err := checkListen("frontend HTTP", o.IP, o.HTTPPort); err != nil {
			return nil, err
		}
	}
	if o.MetricsPort != 0 {
		if err := checkListen("metrics", o.IP, o.MetricsPort); err != nil {
			return nil, err
		}
	}
	persistence, err := prepareStores(o, logger, slogger)
	if err != nil {
		return nil, err
	}
	httpURL := ""
	if addr := ep.httpAddr(o); addr != "" {
		httpURL = "http://" + addr
		if frontendTLS != nil {
			httpURL = "https://" + addr
		}
	}
	// Else the server's own workers hash this whole binary (~150 MB: a third of the start) to name their build.
	worker.SetBinaryChecksum("temporal-dev@" + headers.ServerVersion)
	srv, err := temporal.NewServer(
		temporal.WithConfig(serverConfig(o, ep, persistence, frontendTLS)),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(staticHosts(o, ep)),
		temporal.WithLogger(logger),
		temporal.WithDynamicConfigClient(buildDynamicConfig(defaultDynamicConfig(httpURL, httpAllowedHosts(o)), o.DynamicConfig)),
	)
	if err != nil {
		return nil, fmt.Errorf("creating temporal server: %w", err)
	}
	return srv, nil
}

func joinHostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
