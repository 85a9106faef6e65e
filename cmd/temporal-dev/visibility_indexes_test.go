package main

import (
	"database/sql"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	_ "modernc.org/sqlite" // the plugin's driver, to read the schema back
)

// visibilityIndexes reads the names of executions_visibility's indexes.
func visibilityIndexes(t *testing.T, dsn string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// prepare runs prepareDatabase for the command line args and returns the config it used.
func prepare(t *testing.T, args ...string) *config.SQL {
	t.Helper()
	cfg, _ := prepareBoth(t, args...)
	return cfg
}

// prepareBoth is prepare returning history's and visibility's configs.
func prepareBoth(t *testing.T, args ...string) (history, visibility *config.SQL) {
	t.Helper()
	o := mustParse(t, append(args, "--search-attribute", "NanobotSessionKey=Keyword", "--search-attribute", "NanobotChannel=Keyword")...)
	cfg, err := sqlConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	vis, err := visibilitySQLConfig(o, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := prepareDatabase(o, cfg, vis, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	return cfg, vis
}

func TestVisibilityInAFileOfItsOwn(t *testing.T) {
	dir := t.TempDir()
	history, vis := prepareBoth(t, "--db-filename", filepath.Join(dir, "temporal.db"), "--sqlite-visibility-file", filepath.Join(dir, "visibility.db"))
	if vis.DatabaseName != filepath.Join(dir, "visibility.db") || history.DatabaseName != filepath.Join(dir, "temporal.db") {
		t.Fatalf("history in %s, visibility in %s", history.DatabaseName, vis.DatabaseName)
	}
	if vis.MaxConns != history.MaxConns || vis.ConnectAttributes["journal_mode"] != "wal" {
		t.Errorf("visibility's file lost history's settings: %+v", vis)
	}
	// The trimmed schema is the one visibility writes to.
	lean := visibilityIndexes(t, "file:"+vis.DatabaseName)
	for _, name := range unqueriedVisibilityIndexes {
		if slices.Contains(lean, name) {
			t.Errorf("visibility's own file kept %s", name)
		}
	}
	p, err := prepareStores(mustParse(t, "--db-filename", history.DatabaseName, "--sqlite-visibility-file", vis.DatabaseName), log.NewNoopLogger(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if p.VisibilityStore == p.DefaultStore || p.DataStores[p.VisibilityStore].SQL.DatabaseName != vis.DatabaseName ||
		p.DataStores[p.DefaultStore].SQL.DatabaseName != history.DatabaseName {
		t.Errorf("persistence does not keep visibility apart: %+v", p)
	}
	for _, bad := range [][]string{
		{"--sqlite-visibility-file", filepath.Join(dir, "v.db")},
		{"--db-filename", history.DatabaseName, "--sqlite-visibility-file", history.DatabaseName},
	} {
		o, err := parseFlags(bad, io.Discard)
		if err == nil {
			_, err = prepareStores(o, log.NewNoopLogger(), slog.New(slog.NewTextHandler(io.Discard, nil)))
		}
		if err == nil || !strings.Contains(err.Error(), "--sqlite-visibility-file") {
			t.Errorf("%v: error %v, want one naming --sqlite-visibility-file", bad, err)
		}
	}
}

func TestLeanVisibilityOnANewFileDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "temporal.db")
	prepare(t, "--db-filename", path)
	got := visibilityIndexes(t, "file:"+path)
	keywords := 0
	for _, name := range got {
		if slices.Contains(keptVisibilityIndexes, name) {
			continue
		}
		if !slices.Contains(slices.Collect(maps.Values(customFieldIndexes)), name) {
			t.Errorf("index %s was kept, but nanobot never queries it", name)
		}
		keywords++
	}
	for _, name := range keptVisibilityIndexes {
		if !slices.Contains(got, name) {
			t.Errorf("index %s was dropped; nanobot's queries need it", name)
		}
	}
	if keywords != 2 {
		t.Errorf("kept %d custom search attribute indexes, want 2 (NanobotSessionKey, NanobotChannel): %v", keywords, got)
	}

	// A second start on the same file changes nothing, and reports no error.
	prepare(t, "--db-filename", path)
	if again := visibilityIndexes(t, "file:"+path); !slices.Equal(again, got) {
		t.Errorf("second start: indexes %v, want %v", again, got)
	}
}

func TestExistingDatabaseKeepsItsIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "temporal.db")
	prepare(t, "--db-filename", path, "--sqlite-lean-visibility=false")
	full := visibilityIndexes(t, "file:"+path)
	if len(full) < len(keptVisibilityIndexes)+len(unqueriedVisibilityIndexes)+len(customFieldIndexes) {
		t.Fatalf("the server's full schema has %d indexes, fewer than this file knows of: %v", len(full), full)
	}
	for _, name := range append(slices.Clone(unqueriedVisibilityIndexes), keptVisibilityIndexes...) {
		if !slices.Contains(full, name) {
			t.Errorf("the server's schema has no index %s: the lean list is out of date", name)
		}
	}
	// Lean is the default, yet a database made by an earlier start keeps what it has.
	prepare(t, "--db-filename", path)
	if got := visibilityIndexes(t, "file:"+path); !slices.Equal(got, full) {
		t.Errorf("existing database lost indexes: %v, had %v", got, full)
	}
}

func TestLeanVisibilityInMemory(t *testing.T) {
	cfg := prepare(t)
	// The plugin keeps its shared-cache connection open, so a second connection sees the same DB.
	got := visibilityIndexes(t, "file:"+cfg.DatabaseName+"?mode=memory&cache=shared")
	if len(got) != len(keptVisibilityIndexes)+2 {
		t.Errorf("in-memory indexes = %v, want the %d kept ones and 2 search attributes'", got, len(keptVisibilityIndexes))
	}
}
