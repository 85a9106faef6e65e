package main

import (
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sqliteWithFreePages writes a database of about 2 MB and deletes most of
// its rows, as the namespace retention's deletions do.
func sqliteWithFreePages(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "temporal.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`PRAGMA journal_mode=wal`, `CREATE TABLE h (id INTEGER PRIMARY KEY, data BLOB)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	blob := []byte(strings.Repeat("event ", 700))
	for i := range 500 {
		if _, err := db.Exec(`INSERT INTO h (id, data) VALUES (?, ?)`, i, blob); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`DELETE FROM h WHERE id >= 50`); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileSizes(path string) (db, wal int64) {
	if st, err := os.Stat(path); err == nil {
		db = st.Size()
	}
	if st, err := os.Stat(path + "-wal"); err == nil {
		wal = st.Size()
	}
	return db, wal
}

func TestCompactSQLiteGivesFreePagesBack(t *testing.T) {
	path := sqliteWithFreePages(t)
	if _, err := compactSQLite(path, 0, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	kept, wal := fileSizes(path)
	if wal != 0 {
		t.Errorf("the WAL holds %d bytes after a TRUNCATE checkpoint", wal)
	}
	if _, err := compactSQLite(path, 20, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	after, _ := fileSizes(path)
	t.Logf("free pages at 0%%: %d bytes kept; vacuumed at 20%%: %d bytes", kept, after)
	if after*4 > kept {
		t.Errorf("vacuum left %d of %d bytes; 90%% of the rows were deleted", after, kept)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows, free int
	if err := db.QueryRow(`SELECT count(*) FROM h`).Scan(&rows); err != nil || rows != 50 {
		t.Errorf("rows after vacuum: %d (%v), want the 50 kept", rows, err)
	}
	if err := db.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil || free != 0 {
		t.Errorf("free pages after vacuum: %d (%v)", free, err)
	}
}

func TestCompactSQLiteLeavesAMissingFileAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.db")
	if _, err := compactSQLite(path, 20, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("compacting a missing database created it: %v", err)
	}
}

func TestNamespaceRetentionFlag(t *testing.T) {
	if o := mustParse(t); o.Retention.Hours() != 24 || o.VacuumFreePercent != 20 {
		t.Errorf("defaults: retention %s, vacuum at %d%%", o.Retention, o.VacuumFreePercent)
	}
	if o := mustParse(t, "--namespace-retention", "72h"); o.Retention.Hours() != 72 {
		t.Errorf("--namespace-retention 72h gave %s", o.Retention)
	}
	for _, bad := range [][]string{{"--namespace-retention", "10m"}, {"--sqlite-vacuum-free-percent", "101"}} {
		if _, err := parseFlags(bad, os.Stderr); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: error %v does not name the flag", bad, err)
		}
	}
}

func TestCompactOnlyReportsWhatItFreed(t *testing.T) {
	path := sqliteWithFreePages(t)
	var out, errOut strings.Builder
	if code := run([]string{"--compact-only", "--db-filename", path, "--sqlite-vacuum-free-percent", "1"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	t.Log(out.String())
	if !strings.Contains(out.String(), "temporal-dev: compacted "+path+": ") || !strings.Contains(out.String(), "(vacuumed: true)") {
		t.Errorf("output: %q", out.String())
	}
	if code := run([]string{"--compact-only"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "--compact-only needs --db-filename") {
		t.Errorf("without a file: exit %d, %q", code, errOut.String())
	}
}
