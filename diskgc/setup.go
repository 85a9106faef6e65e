package diskgc

import (
	"log/slog"
	"path/filepath"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/session"
)

// EmbeddedTemporalDB is the SQLite file of the Temporal server nanobot
// starts itself when TEMPORAL_ADDRESS is unset.
func EmbeddedTemporalDB(home string) string { return filepath.Join(home, "temporal", "temporal.db") }

// For is the sweep the config asks for on the host holding its workspace,
// over its sessions and its media store (the shared rows on the database).
func For(cfg *config.Config, sessions session.Store, shared media.Store, log *slog.Logger) Sweep {
	ws := cfg.Agents.Defaults.WorkspacePath()
	s := Sweep{Ages: cfg.Retention.Ages(), Sessions: sessions, MediaDir: media.Dir(ws), TempDir: media.Dir(""), Log: log}
	if m, ok := shared.(*pgstore.Media); ok {
		s.Media = m
	}
	return s
}

// PlacesOf are where the config's state lives (on db when it is set); temporalDB is the embedded
// server's file, or "" when an external server is used.
func PlacesOf(cfg *config.Config, db *pgstore.DB, temporalDB string) Places {
	home, ws := config.ConfigDir(cfg.Path), cfg.Agents.Defaults.WorkspacePath()
	return Places{SessionsDir: session.SessionsDir(home, ws), MediaDir: media.Dir(ws), TempDir: media.Dir(""),
		MemoryDir: memory.Dir(ws), TemporalDB: temporalDB, DB: db}
}
