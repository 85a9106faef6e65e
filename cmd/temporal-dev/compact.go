package main

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	_ "modernc.org/sqlite" // the driver the server's SQLite plugin uses; registered as "sqlite"
)

// compactSQLite runs before the server opens path, the only moment nothing
// else holds it: it folds the WAL into the file and truncates it, and
// VACUUMs when at least freePercent of the pages are free (rows removed by
// the namespace retention leave free pages that SQLite never gives back on
// its own). A missing file is left alone; 0 never vacuums.
func compactSQLite(path string, freePercent int, logger *slog.Logger) error {
	before, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("compacting %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return fmt.Errorf("compacting %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var pages, free int64
	if err := db.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		return fmt.Errorf("compacting %s: %w", path, err)
	}
	if err := db.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil {
		return fmt.Errorf("compacting %s: %w", path, err)
	}
	vacuum := freePercent > 0 && pages > 0 && free*100 >= int64(freePercent)*pages
	if vacuum {
		if _, err := db.Exec(`VACUUM`); err != nil {
			return fmt.Errorf("vacuuming %s: %w", path, err)
		}
	}
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpointing %s: %w", path, err)
	}
	if after, err := os.Stat(path); err == nil && vacuum {
		logger.Info("vacuumed the SQLite database", "db", path, "free_pages", free, "pages", pages,
			"bytes_before", before.Size(), "bytes_after", after.Size())
	}
	return nil
}
