package devicestore

import (
	"context"
	"database/sql"
	"fmt"

	"go.mau.fi/whatsmeow/store"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/nanobot-durable/nanobot/internal/sqlitefile"
)

// Container is the store file: the device container and, for the one
// device it holds, every whatsmeow store.
type Container struct {
	db  *sql.DB
	log waLog.Logger
}

var (
	_ store.AllStores       = (*Container)(nil)
	_ store.DeviceContainer = (*Container)(nil)
)

// Open opens (or creates) the store at path — directory 0700 and file
// 0600, since it holds the device's private keys — in WAL mode, and
// brings its schema up to date.
func Open(ctx context.Context, path string, log waLog.Logger) (*Container, error) {
	db, err := sqlitefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("whatsapp %w", err)
	}
	// one connection: writes are serialised in Go, and a transaction in
	// a context (DoDecryptionTxn) is the only writer while it runs
	db.SetMaxOpenConns(1)
	if err := migrate(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("whatsapp store %s: %w", path, err)
	}
	if log == nil {
		log = waLog.Noop
	}
	return &Container{db: db, log: log}, nil
}

// Close closes the file.
func (c *Container) Close() error {
	if err := c.db.Close(); err != nil {
		return fmt.Errorf("close whatsapp store: %w", err)
	}
	return nil
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// txKey carries a running transaction of one Container in a context.
type txKey struct{}

type ctxTx struct {
	owner *Container
	tx    *sql.Tx
}

// q is the transaction ctx carries for c, else the database: calls made
// inside DoDecryptionTxn or a bulk write join it instead of waiting for
// the one connection it holds.
func (c *Container) q(ctx context.Context) querier {
	if t, ok := ctx.Value(txKey{}).(ctxTx); ok && t.owner == c {
		return t.tx
	}
	return c.db
}

// inTx runs fn in a transaction (joining one ctx already carries),
// committed when fn returns nil and rolled back otherwise.
func (c *Container) inTx(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	if t, ok := ctx.Value(txKey{}).(ctxTx); ok && t.owner == c {
		return fn(ctx)
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: begin: %w", what, err)
	}
	if err := fn(context.WithValue(ctx, txKey{}, ctxTx{owner: c, tx: tx})); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", what, err)
	}
	return nil
}

// prefixBounds gives lo ≤ s < hi for every s starting with p (p non-empty,
// its last byte below 0xff), so a prefix match can use a primary key.
func prefixBounds(p string) (lo, hi string) {
	b := []byte(p)
	b[len(b)-1]++
	return p, string(b)
}
