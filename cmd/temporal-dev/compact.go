package main

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
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
// compacted is what compactSQLiteFile did: the file's and its WAL's bytes before and after.
type compacted struct {
	Before, After int64
	Vacuumed      bool
}

func sizeWithWAL(path string) int64 {
	var n int64
	for _, suffix := range []string{"", "-wal"} {
		if st, err := os.Stat(path + suffix); err == nil {
			n += st.Size()
		}
	}
	return n
}

func compactSQLite(path string, freePercent int, logger *slog.Logger) (compacted, error) {
	out := compacted{Before: sizeWithWAL(path)}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return out, nil
	} else if err != nil {
		return out, fmt.Errorf("compacting %s: %w", path, err)
	}
	err := compactOpen(path, freePercent, &out)
	out.After = sizeWithWAL(path)
	if err == nil && out.Vacuumed {
		logger.Info("vacuumed the SQLite database", "db", path, "bytes_before", out.Before, "bytes_after", out.After)
	}
	return out, err
}

func compactOpen(path string, freePercent int, out *compacted) error {
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
	out.Vacuumed = freePercent > 0 && pages > 0 && free > 0 && free*100 >= int64(freePercent)*pages
	if out.Vacuumed {
		if _, err := db.Exec(`VACUUM`); err != nil {
			return fmt.Errorf("vacuuming %s: %w", path, err)
		}
	}
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpointing %s: %w", path, err)
	}
	return nil
}

// compactOnly is --compact-only: compact the database files of a stopped server and say what it freed.
func compactOnly(o *options, stdout io.Writer, logger *slog.Logger) error {
	if o.DBFilename == "" {
		return errors.New("--compact-only needs --db-filename")
	}
	files := []string{o.DBFilename}
	if o.VisibilityFile != "" {
		files = append(files, o.VisibilityFile)
	}
	for _, f := range files {
		c, err := compactSQLite(f, o.VacuumFreePercent, logger)
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintf(stdout, "temporal-dev: compacted %s: %d bytes before, %d after (vacuumed: %t)\n", f, c.Before, c.After, c.Vacuumed)
	}
	return nil
}
