package main

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
)

const (
	// visibilitySuffix names the visibility database after the main one, as Temporal's own
	// deployments pair "temporal" with "temporal_visibility".
	visibilitySuffix = "_visibility"
	// Embedded schema names, as temporal-sql-tool's --schema-name takes them.
	postgresSchema           = "postgresql/v12/temporal"
	postgresVisibilitySchema = "postgresql/v12/visibility"
	// defaultPostgresPort is PostgreSQL's port when the URL names none.
	defaultPostgresPort = "5432"
	// maxIdentifier is PostgreSQL's limit on a database name (NAMEDATALEN - 1).
	maxIdentifier = 63
)

// postgresTarget is a validated --db URL.
type postgresTarget struct {
	User       string
	Password   string
	Addr       string // host:port
	Database   string
	Attributes map[string]string // the URL's query, passed to the driver (sslmode, …)
	redacted   string            // the URL without its password, for messages
}

// VisibilityDatabase is the database that holds visibility beside Database.
func (t *postgresTarget) VisibilityDatabase() string { return t.Database + visibilitySuffix }

var databaseNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parsePostgresURL checks a --db value; errors never repeat the URL, as it may hold a password.
func parsePostgresURL(raw string) (*postgresTarget, error) {
	const want = "want postgres://user:password@host:port/database"
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid --db: not a URL (%s)", want)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("invalid --db: scheme %q is not postgres (%s)", u.Scheme, want)
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("invalid --db: no host (%s)", want)
	}
	if u.Fragment != "" {
		return nil, errors.New("invalid --db: a URL fragment (#…) is not allowed")
	}
	port := u.Port()
	if port == "" {
		port = defaultPostgresPort
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("invalid --db: port %q: want 1-65535", port)
	}
	db := u.Path
	if len(db) > 0 && db[0] == '/' {
		db = db[1:]
	}
	if db == "" {
		return nil, fmt.Errorf("invalid --db: no database name (%s)", want)
	}
	if !databaseNameRE.MatchString(db) {
		return nil, fmt.Errorf("invalid --db: database name %q: want letters, digits and underscores", db)
	}
	if len(db)+len(visibilitySuffix) > maxIdentifier {
		return nil, fmt.Errorf("invalid --db: database name %q is too long: at most %d characters, as %s%s must fit PostgreSQL's %d",
			db, maxIdentifier-len(visibilitySuffix), db, visibilitySuffix, maxIdentifier)
	}
	attrs := map[string]string{}
	for k, vs := range u.Query() {
		if len(vs) != 1 {
			return nil, fmt.Errorf("invalid --db: query parameter %q given %d times", k, len(vs))
		}
		attrs[k] = vs[0]
	}
	password, _ := u.User.Password()
	return &postgresTarget{
		User:       u.User.Username(),
		Password:   password,
		Addr:       net.JoinHostPort(u.Hostname(), port),
		Database:   db,
		Attributes: attrs,
		redacted:   u.Redacted(),
	}, nil
}

// postgresSQLConfig is the pgx plugin's config for one database of the target.
func postgresSQLConfig(t *postgresTarget, database string) *config.SQL {
	return &config.SQL{
		PluginName:      postgresql.PluginNamePGX,
		DatabaseName:    database,
		ConnectAddr:     t.Addr,
		ConnectProtocol: "tcp",
		// The plugin puts User into its DSN as it is, so it must arrive escaped.
		User:              url.User(t.User).String(),
		Password:          t.Password,
		ConnectAttributes: maps.Clone(t.Attributes),
		MaxConns:          20,
		MaxIdleConns:      20,
		MaxConnLifetime:   time.Hour,
	}
}

// postgresPersistence puts the default store and visibility into the target's two databases.
func postgresPersistence(t *postgresTarget) config.Persistence {
	const defaultStore, visibilityStore = "postgres-default", "postgres-visibility"
	return config.Persistence{
		DefaultStore:     defaultStore,
		VisibilityStore:  visibilityStore,
		NumHistoryShards: 1,
		DataStores: map[string]config.DataStore{
			defaultStore:    {SQL: postgresSQLConfig(t, t.Database)},
			visibilityStore: {SQL: postgresSQLConfig(t, t.VisibilityDatabase())},
		},
	}
}

// preparePostgres creates both databases if missing and brings their schemas to this server's
// version, as `temporal-sql-tool create`, `setup-schema -v 0.0` and `update-schema` would; on a
// database already set up it changes nothing.
func preparePostgres(t *postgresTarget, logger log.Logger) error {
	for _, step := range []struct{ database, maintenance, schemaName string }{
		{t.Database, "", postgresSchema},
		{t.VisibilityDatabase(), t.Database, postgresVisibilitySchema},
	} {
		cfg := postgresSQLConfig(t, step.database)
		if err := ensureDatabase(cfg, step.maintenance, logger); err != nil {
			return err
		}
		if err := migrateSchema(cfg, step.schemaName, logger); err != nil {
			return err
		}
	}
	return nil
}

// ensureDatabase connects to cfg's database and, when that fails, creates it through the
// maintenance database ("" = postgres); creating needs CREATEDB, connecting does not.
func ensureDatabase(cfg *config.SQL, maintenance string, logger log.Logger) error {
	connectErr := pingDatabase(cfg)
	if connectErr == nil {
		return nil
	}
	create := *cfg
	create.ConnectAttributes = maps.Clone(cfg.ConnectAttributes)
	if err := sqltool.DoCreateDatabase(&create, maintenance, logger); err != nil {
		return fmt.Errorf("--db: database %s cannot be reached (%w) nor created (%w)", cfg.DatabaseName, connectErr, err)
	}
	if err := pingDatabase(cfg); err != nil {
		return fmt.Errorf("--db: database %s was created but cannot be reached: %w", cfg.DatabaseName, err)
	}
	return nil
}

// pingDatabase connects quietly: a database missing on first start is expected, not an error line.
func pingDatabase(cfg *config.SQL) error {
	conn, err := sqltool.NewConnection(cfg, log.NewNoopLogger())
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Exec("SELECT 1")
}

// migrateSchema is temporal-sql-tool's setup-schema -v 0.0 then update-schema --schema-name:
// the version tables say what a real deployment's tooling expects to find.
func migrateSchema(cfg *config.SQL, schemaName string, logger log.Logger) error {
	conn, err := sqltool.NewConnection(cfg, logger)
	if err != nil {
		return fmt.Errorf("--db: connecting to database %s: %w", cfg.DatabaseName, err)
	}
	defer conn.Close()
	if err := schema.NewSetupSchemaTask(conn, &schema.SetupConfig{InitialVersion: "0.0"}, logger).Run(); err != nil {
		return fmt.Errorf("--db: setting up the version tables of database %s: %w", cfg.DatabaseName, err)
	}
	update := &schema.UpdateConfig{DBName: cfg.DatabaseName, SchemaName: schemaName}
	if err := schema.NewUpdateSchemaTask(conn, update, logger).Run(); err != nil {
		return fmt.Errorf("--db: updating database %s to schema %s: %w", cfg.DatabaseName, schemaName, err)
	}
	return nil
}
