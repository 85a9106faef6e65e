package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The schema is plain SQL files, NNNN_name.sql, applied in order once each;
// schema_migrations records which ran. A released file is never edited: a
// change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock serializes hosts migrating at once (pg_advisory_lock key).
const migrationLock = 0x6e616e6f626f74 // "nanobot"

// Migration is one schema file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// MigrationState is a migration and whether (and when) this database applied it.
type MigrationState struct {
	Migration
	Applied   bool
	AppliedAt time.Time
	// Unknown: the database applied a version this build does not have (a newer nanobot).
	Unknown bool
}

// Migrations are the schema files of this build, oldest first.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration file %s is not named NNNN_name.sql", e.Name())
		}
		sql, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(sql)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

const createVersionTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now())`

// Migrate applies the migrations the database lacks, each in its own
// transaction, holding an advisory lock so two hosts starting at once do
// not both apply one. It returns the ones it applied.
func (db *DB) Migrate(ctx context.Context) ([]Migration, error) {
	all, err := Migrations()
	if err != nil {
		return nil, err
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate %s: %w", db.where, err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return nil, fmt.Errorf("migrate %s: take the migration lock: %w", db.where, err)
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", migrationLock) //nolint:errcheck // the session ends anyway
	if _, err := conn.Exec(ctx, createVersionTable); err != nil {
		return nil, fmt.Errorf("migrate %s: create schema_migrations: %w", db.where, err)
	}
	applied, err := appliedVersions(ctx, conn.Conn())
	if err != nil {
		return nil, err
	}
	var done []Migration
	for _, m := range all {
		if _, ok := applied[m.Version]; ok {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("migration %04d_%s on %s: %w", m.Version, m.Name, db.where, err)
		}
		db.log.Info("applied a database migration", "version", m.Version, "name", m.Name, "database", db.where)
		done = append(done, m)
	}
	return done, nil
}

// Status lists every migration of this build with whether the database has
// it, then any version the database has that this build does not.
func (db *DB) Status(ctx context.Context) ([]MigrationState, error) {
	all, err := Migrations()
	if err != nil {
		return nil, err
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("status of %s: %w", db.where, err)
	}
	defer conn.Release()
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass('schema_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return nil, fmt.Errorf("status of %s: %w", db.where, err)
	}
	applied := map[int]appliedRow{}
	if exists {
		if applied, err = appliedVersions(ctx, conn.Conn()); err != nil {
			return nil, err
		}
	}
	var out []MigrationState
	for _, m := range all {
		row, ok := applied[m.Version]
		out = append(out, MigrationState{Migration: m, Applied: ok, AppliedAt: row.at})
		delete(applied, m.Version)
	}
	for v, row := range applied {
		out = append(out, MigrationState{Migration: Migration{Version: v, Name: row.name}, Applied: true, AppliedAt: row.at, Unknown: true})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

type appliedRow struct {
	name string
	at   time.Time
}

func appliedVersions(ctx context.Context, conn *pgx.Conn) (map[int]appliedRow, error) {
	rows, err := conn.Query(ctx, "SELECT version, name, applied_at FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	out := map[int]appliedRow{}
	for rows.Next() {
		var v int
		var r appliedRow
		if err := rows.Scan(&v, &r.name, &r.at); err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		out[v] = r
	}
	return out, rows.Err()
}
