// Package sqlitefile opens a SQLite file that holds secrets (a device's
// keys) through the pure-Go driver: private to the user, in WAL mode.
package sqlitefile

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver "sqlite": no cgo
)

// Open opens (or creates) the file at path — its directory 0700, the file
// 0600, created before SQLite sees it so its -wal and -shm (which copy the
// file's mode) are never world-readable — with foreign keys on, a 5 s
// busy timeout and WAL. params are more DSN parameters ("_txlock=immediate").
func Open(path string, params ...string) (*sql.DB, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	_ = f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
	for _, p := range params {
		dsn += "&" + p
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	return db, nil
}
