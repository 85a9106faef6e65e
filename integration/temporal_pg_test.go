package integration

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// temporalOnPostgres gives temporal-dev --db a fresh database of its own; the visibility
// database temporal-dev adds beside it is dropped with it.
func temporalOnPostgres(t *testing.T) string {
	dbURL := pgtest.Database(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	visibility := strings.TrimPrefix(u.Path, "/") + "_visibility"
	t.Cleanup(func() { pgtest.Drop(t, dbURL, visibility) })
	return dbURL
}

// TestTemporalOnPostgresSurvivesAKillMidTurn: temporal-dev on PostgreSQL is SIGKILLed while a
// turn's tool call is done and its model call hangs; started again on the same database, the
// turn completes, its write happened once and its answer was delivered once. The turn is found
// by nanobot's search attribute, so visibility and the attributes live on PostgreSQL too.
func TestTemporalOnPostgresSurvivesAKillMidTurn(t *testing.T) {
	dbURL := temporalOnPostgres(t)
	port := testenv.FreePort(t)
	dev := testenv.StartDevServerOn(t, port, "--db", dbURL)
	const answer = "Written, through a kill of the server."
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "w1", Name: "write_file", Args: `{"path":"out.txt","content":"once"}`}),
		modeltest.Block().Text(answer),
	).Handle(func(*modeltest.RecordedRequest) modeltest.Step { return modeltest.Text(answer) })
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	_, logs := startWorker(t, home.Env(dev.Addr))
	// The channel's own client outlives the killed server's, as a gateway's would.
	quiet := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	chClient, err := client.Dial(client.Options{HostPort: dev.Addr, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(chClient.Close)
	const queue = "pg-replies"
	ch := startRecordingChannel(t, chClient, queue)

	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", Stream: true})}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	route := protocol.Route{Channel: "cli", ChatID: "pgkill", Queue: queue}
	_, err = bus.Publish(ctx, protocol.Inbound{ID: "k1", SessionKey: protocol.SessionKey(route.Channel, route.ChatID), Route: route, Content: "write it", SentAt: time.Now()})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 20*time.Millisecond, "worker log:\n%s", logs)

	dev.Kill()
	model.Release() // the model answers while no server runs
	dev = testenv.StartDevServerOn(t, port, "--db", dbURL)

	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:pgkill"), "").Get(ctx, &res), "worker log:\n%s", logs)
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	require.Equal(t, answer, res.ReplyPreview)
	require.Eventually(t, func() bool { return ch.answered()["k1"] > 0 }, time.Minute, 20*time.Millisecond, "never delivered; worker log:\n%s", logs)
	require.Equal(t, map[string]int{"k1": 1}, ch.answered(), "the message is answered exactly once")
	require.Equal(t, answer, finalReply(ch, "k1"))
	data, err := os.ReadFile(filepath.Join(home.Workspace, "out.txt"))
	require.NoError(t, err)
	require.Equal(t, "once", string(data))
	_, msgs := sessionLines(t, home, "cli:pgkill")
	require.Equal(t, []string{"user", "assistant", "tool", "assistant"}, roles(msgs))
	require.Equal(t, answer, msgs[3].Content)

	query := protocol.SessionKeyAttribute.GetName() + ` = "cli:pgkill"`
	require.Eventually(t, func() bool {
		resp, err := dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		return err == nil && len(resp.Executions) > 0
	}, time.Minute, 100*time.Millisecond, "no turn found by %s", query)

	// The history is in the database we named, under the schema version Temporal's tools write.
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var events int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM history_node").Scan(&events))
	require.Positive(t, events, "no history in PostgreSQL")
	var version string
	require.NoError(t, conn.QueryRow(ctx, "SELECT curr_version FROM schema_version WHERE version_partition = 0").Scan(&version))
	require.Regexp(t, `^1\.\d+$`, version)
}

// TestComposeFileMatchesTheTestedServer: docker-compose.temporal.yml runs the server version
// temporal-dev links, on its plugin and schemas, with deploy/temporal-dynamicconfig.yaml and
// the search attributes nanobot sets.
func TestComposeFileMatchesTheTestedServer(t *testing.T) {
	root := testenv.RepoRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "cmd", "temporal-dev", "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*go\.temporal\.io/server v(\S+)`).FindSubmatch(mod)
	require.NotNil(t, m, "cmd/temporal-dev/go.mod names no go.temporal.io/server")
	version := string(m[1])
	data, err := os.ReadFile(filepath.Join(root, "docker-compose.temporal.yml"))
	require.NoError(t, err)
	compose := string(data)
	for _, want := range []string{
		"image: temporalio/server:" + version + "\n",
		"image: temporalio/admin-tools:" + version + "\n",
		"DB: postgres12_pgx\n",
		"--plugin postgres12_pgx",
		"--schema-name postgresql/v12/temporal",
		"postgresql/v12/visibility",
		"VISIBILITY_DBNAME: temporal_visibility\n",
		"- ./deploy/temporal-dynamicconfig.yaml:/etc/temporal/config/dynamicconfig/nanobot.yaml:ro\n",
		"DYNAMIC_CONFIG_FILE_PATH: config/dynamicconfig/nanobot.yaml\n",
		"--name " + protocol.SessionKeyAttribute.GetName() + " --type Keyword",
		"--name " + protocol.ChannelAttribute.GetName() + " --type Keyword",
	} {
		require.Contains(t, compose, want)
	}
	require.NotContains(t, compose, "auto-setup", "the compose file runs another server than the one tested")
}
