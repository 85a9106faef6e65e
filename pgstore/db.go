// Package pgstore keeps nanobot's state in PostgreSQL (pgx), behind the same
// interfaces as the JSONL files: sessions with their claims and turn data,
// usage, pairing, the memory archive with Dream's cursor, and channel dedupe
// sets. Every host of a deployment opens the same database.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nanobot-durable/nanobot/session"
)

// opTimeout bounds a call whose interface carries no context (usage,
// pairing, listing): a database that stopped answering fails it, never hangs it.
const opTimeout = 30 * time.Second

// defaultMaxConns replaces pgxpool's default (4 on a small machine): a
// worker runs many activities at once. pool_max_conns in the URL wins.
const defaultMaxConns = 32

// DB is one connection pool to nanobot's database.
type DB struct {
	pool     *pgxpool.Pool
	where    string
	log      *slog.Logger
	sessions *session.Cache[rowStamp] // parsed sessions, checked against their row's version
	turnData turnDataCache            // turn blobs written or read here
}

// Open connects to the database at rawURL (postgres://… or key=value) and
// applies the migrations it lacks.
func Open(ctx context.Context, rawURL string, log *slog.Logger) (*DB, error) {
	db, err := Connect(ctx, rawURL, log)
	if err != nil {
		return nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Connect connects without migrating (`nanobot db status`).
func Connect(ctx context.Context, rawURL string, log *slog.Logger) (*DB, error) {
	if log == nil {
		log = slog.Default()
	}
	cfg, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL %s: %w", Redact(rawURL), err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to PostgreSQL %s: %w", Redact(rawURL), err)
	}
	return &DB{pool: pool, where: Redact(rawURL), log: log, sessions: session.NewCache[rowStamp]()}, nil
}

// ParseURL checks a database URL and sets nanobot's pool defaults.
func ParseURL(rawURL string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("not a PostgreSQL URL: %s", parseProblem(err))
	}
	if !hasParam(rawURL, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	return cfg, nil
}

// parseProblem says what is wrong with a URL without repeating the URL,
// which may hold a password.
func parseProblem(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		if inner := errors.Unwrap(pe); inner != nil {
			return inner.Error()
		}
		return "want postgres://user:password@host:port/database"
	}
	return err.Error()
}

func hasParam(rawURL, name string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && u.Query().Has(name)
}

// Redact is the URL without its password, for messages and logs.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return "(a key=value connection string)"
	}
	return u.Redacted()
}

// Password is the URL's password ("" without one), for the log's masks.
func Password(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}

// Where names the database for people reading logs.
func (db *DB) Where() string { return db.where }

// Pool is the connection pool, for tests and tools.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Close closes the pool.
func (db *DB) Close() { db.pool.Close() }

// bounded is a context for calls that come without one.
func bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (db *DB) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db.pool, fn)
}
