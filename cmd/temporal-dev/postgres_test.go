package main

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	postgresschema "go.temporal.io/server/schema/postgresql/v12"
	sqltool "go.temporal.io/server/tools/sql"
)

func TestDBFlagTakesAPostgresURL(t *testing.T) {
	o := mustParse(t, "--db", "postgres://temporal:s%40cret@127.0.0.1:5433/temporal?sslmode=disable")
	want := &postgresTarget{
		User: "temporal", Password: "s@cret", Addr: "127.0.0.1:5433", Database: "temporal",
		Attributes: map[string]string{"sslmode": "disable"},
		redacted:   "postgres://temporal:xxxxx@127.0.0.1:5433/temporal?sslmode=disable",
	}
	if !reflect.DeepEqual(o.Postgres, want) {
		t.Fatalf("target = %+v, want %+v", o.Postgres, want)
	}
	if o.Postgres.VisibilityDatabase() != "temporal_visibility" {
		t.Errorf("visibility database = %q", o.Postgres.VisibilityDatabase())
	}
	o = mustParse(t, "--db=postgresql://nanobot@db.example/nb")
	if o.Postgres.Addr != "db.example:5432" || o.Postgres.Password != "" || len(o.Postgres.Attributes) != 0 {
		t.Errorf("default port and no password: got %+v", o.Postgres)
	}
	if o := mustParse(t); o.Postgres != nil {
		t.Errorf("no --db: got %+v", o.Postgres)
	}
}

func TestDBFlagRejectsBadValuesNamingTheFlag(t *testing.T) {
	long := strings.Repeat("d", 53)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", "mysql://u:s3cret@h/db"}, `scheme "mysql"`},
		{[]string{"--db", "postgres://u:s3cret@/db"}, "no host"},
		{[]string{"--db", "postgres:db"}, "no host"},
		{[]string{"--db", "postgres://u:s3cret@h:99999/db"}, `port "99999"`},
		{[]string{"--db", "postgres://u:s3cret@h:5432"}, "no database name"},
		{[]string{"--db", "postgres://u:s3cret@h:5432/"}, "no database name"},
		{[]string{"--db", "postgres://u:s3cret@h/a/b"}, `database name "a/b"`},
		{[]string{"--db", `postgres://u:s3cret@h/my"db`}, "database name"},
		{[]string{"--db", "postgres://u:s3cret@h/" + long}, "too long"},
		{[]string{"--db", "postgres://u:s3cret@h/db#x"}, "fragment"},
		{[]string{"--db", "postgres://u:s3cret@h/db?sslmode=a&sslmode=b"}, `"sslmode" given 2 times`},
		{[]string{"--db", "postgres://u:s3cret@h:port/db"}, "not a URL"},
		{[]string{"--db", "postgres://u:s3cret@h/db", "--db-filename", "x.db"}, "--db-filename"},
		{[]string{"--db", "postgres://u:s3cret@h/db", "--sqlite-pragma", "cache_size=1"}, "--sqlite-pragma"},
	} {
		_, err := parseFlags(tc.args, io.Discard)
		if err == nil {
			t.Errorf("%q: no error", tc.args)
			continue
		}
		if !strings.Contains(err.Error(), "--db") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %q, want it to name --db and say %q", tc.args, err, tc.want)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error %q repeats the password", tc.args, err)
		}
	}
}

func TestPostgresPersistenceUsesTwoDatabasesOnThePgxPlugin(t *testing.T) {
	target, err := parsePostgresURL("postgres://a%40b:pw@127.0.0.1:5432/temporal?sslmode=require")
	if err != nil {
		t.Fatal(err)
	}
	p := postgresPersistence(target)
	if p.NumHistoryShards != 1 || p.DefaultStore == p.VisibilityStore {
		t.Fatalf("persistence = %+v", p)
	}
	def, vis := p.DataStores[p.DefaultStore].SQL, p.DataStores[p.VisibilityStore].SQL
	if def == nil || vis == nil {
		t.Fatalf("stores missing: %+v", p.DataStores)
	}
	for _, c := range []*config.SQL{def, vis} {
		if c.PluginName != postgresql.PluginNamePGX || c.ConnectAddr != "127.0.0.1:5432" || c.Password != "pw" {
			t.Errorf("store %s = %+v", c.DatabaseName, c)
		}
		if c.User != "a%40b" {
			t.Errorf("user %q must reach the plugin's DSN escaped", c.User)
		}
		if c.ConnectAttributes["sslmode"] != "require" {
			t.Errorf("attributes = %v", c.ConnectAttributes)
		}
	}
	if def.DatabaseName != "temporal" || vis.DatabaseName != "temporal_visibility" {
		t.Errorf("databases = %s, %s", def.DatabaseName, vis.DatabaseName)
	}
	def.ConnectAttributes["x"] = "y"
	if _, shared := vis.ConnectAttributes["x"]; shared {
		t.Error("the two stores share one attribute map")
	}
}

// testDatabaseEnv is the cluster `make test` starts (e2e/postgres.sh), as the root module names it.
const testDatabaseEnv = "NANOBOT_TEST_DATABASE_URL"

// TestPreparePostgresCreatesAndMigratesOnce runs the first-start setup on a database that does
// not exist yet, then again: both databases end at this server's schema versions, and the second
// run finds nothing to do.
func TestPreparePostgresCreatesAndMigratesOnce(t *testing.T) {
	admin := os.Getenv(testDatabaseEnv)
	if admin == "" {
		peerMissing(t, "postgresql", testDatabaseEnv+" is not set: make test starts a cluster with e2e/postgres.sh (apt package postgresql)")
	}
	base, err := parsePostgresURL(admin)
	if err != nil {
		t.Fatalf("%s: %v", testDatabaseEnv, err)
	}
	logger := log.NewNoopLogger()
	if err := pingDatabase(postgresSQLConfig(base, base.Database)); err != nil {
		t.Fatalf("%s is set but the database cannot be reached: %v", testDatabaseEnv, err)
	}
	peerUsed(t, "postgresql")
	var b [6]byte
	_, _ = rand.Read(b[:])
	target := *base
	target.Database = "tdev_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		for _, db := range []string{target.VisibilityDatabase(), target.Database} {
			if err := sqltool.DoDropDatabase(postgresSQLConfig(base, db), base.Database, logger); err != nil {
				t.Errorf("dropping %s: %v", db, err)
			}
		}
	})

	for run := 1; run <= 2; run++ {
		if err := preparePostgres(&target, logger); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		for db, want := range map[string]string{
			target.Database:             postgresschema.Version,
			target.VisibilityDatabase(): postgresschema.VisibilityVersion,
		} {
			conn, err := sqltool.NewConnection(postgresSQLConfig(&target, db), logger)
			if err != nil {
				t.Fatal(err)
			}
			got, err := conn.ReadSchemaVersion()
			conn.Close()
			if err != nil || got != want {
				t.Errorf("run %d: %s schema version %q (%v), want %q", run, db, got, err, want)
			}
		}
	}
}

// TestDeployDynamicConfigAgreesWithTheDevServer: the file an external cluster loads
// (docker-compose.temporal.yml) sets only keys temporal-dev sets too, to the same values, and
// the server's own file client reads it.
func TestDeployDynamicConfigAgreesWithTheDevServer(t *testing.T) {
	const path = "../../deploy/temporal-dynamicconfig.yaml"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	client, err := dynamicconfig.NewFileBasedClient(&dynamicconfig.FileBasedClientConfig{Filepath: path, PollInterval: time.Minute}, log.NewNoopLogger(), make(chan any))
	if err != nil {
		t.Fatalf("the server cannot load %s: %v", path, err)
	}
	defaults := defaultDynamicConfig("http://127.0.0.1:7243", nil)
	var keys []string
	for line := range strings.Lines(string(data)) {
		if key, ok := strings.CutSuffix(strings.TrimSpace(line), ":"); ok && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "#") {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		t.Fatalf("no keys found in %s", path)
	}
	for _, key := range keys {
		want, ok := defaults[key]
		if !ok {
			t.Errorf("%s sets %s, which temporal-dev does not", path, key)
			continue
		}
		values := client.GetValue(dynamicconfig.MakeKey(key))
		if len(values) != 1 || len(values[0].Constraints.Namespace) != 0 {
			t.Errorf("%s: %s = %+v, want one unconstrained value", path, key, values)
			continue
		}
		got := values[0].Value
		if d, isDuration := want.(time.Duration); isDuration {
			s, _ := got.(string)
			parsed, err := time.ParseDuration(s)
			if err != nil || parsed != d {
				t.Errorf("%s: %s = %v, temporal-dev sets %v", path, key, got, d)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s = %#v, temporal-dev sets %#v", path, key, got, want)
		}
	}
}
