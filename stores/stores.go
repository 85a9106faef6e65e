// Package stores opens where a process keeps its state, chosen in this one
// place from the config: the JSONL files under the home (the default, one
// host) or PostgreSQL when database.url (or NANOBOT_DATABASE_URL) is set.
package stores

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/usage"
)

// Set is one process's stores, all on one backend.
type Set struct {
	// Sessions is the journal; every backend's is also a session.Lister.
	Sessions session.Store
	Usage    usage.Store
	Pairing  *pairing.Store
	Archive  memory.Archive
	// DB is the database (nil on the files): channel dedupe sets, db commands.
	DB *pgstore.DB
	// Owner is the instance's owner key (see package owner); Open resolves it.
	Owner owner.Key
	where string
	// lease is how the claims on the database's dedupe sets expire.
	lease pgstore.Lease
}

// Open opens the stores the config names. On PostgreSQL it connects and
// applies the migrations the database lacks.
func Open(ctx context.Context, cfg *config.Config, log *slog.Logger) (*Set, error) {
	if log == nil {
		log = slog.Default()
	}
	var set *Set
	var shared owner.Store
	if cfg.Database.URL != "" {
		db, err := pgstore.Open(ctx, cfg.Database.URL, log)
		if err != nil {
			return nil, fmt.Errorf("%s: database.url: %w", cfg.Database.Source(), err)
		}
		set, shared = OnDatabase(db), db.OwnerKey(instanceName(cfg.Instance()))
		set.lease = ClaimLease(config.ConfigDir(cfg.Path))
	} else {
		var err error
		if set, err = OnFiles(cfg, log); err != nil {
			return nil, err
		}
	}
	k, err := owner.Resolve(ctx, owner.FileIn(config.ConfigDir(cfg.Path)), shared)
	if err != nil {
		set.Close()
		return nil, fmt.Errorf("owner key: %w", err)
	}
	set.Owner = k
	return set, nil
}

func instanceName(inst protocol.Instance) string {
	if inst == "" {
		return string(protocol.DefaultInstance)
	}
	return string(inst)
}

// OnDatabase is the stores of an open database.
func OnDatabase(db *pgstore.DB) *Set {
	return &Set{Sessions: db.Sessions(), Usage: db.Usage(), Pairing: db.Pairing(), Archive: db.Archive(), DB: db,
		where: "PostgreSQL " + db.Where()}
}

// OnFiles is the stores of a home and its workspace: nanobot's files.
func OnFiles(cfg *config.Config, log *slog.Logger) (*Set, error) {
	home, workspace := config.ConfigDir(cfg.Path), cfg.Agents.Defaults.WorkspacePath()
	sessions, err := session.NewJSONLStore(session.SessionsDir(home, workspace), log)
	if err != nil {
		return nil, err
	}
	return &Set{
		Sessions: sessions,
		Usage:    usage.Open(usage.Path(home)),
		Pairing:  pairing.NewStore(home),
		Archive:  memory.Files{Workspace: workspace},
		where:    "files under " + home + " and " + memory.Dir(workspace),
	}, nil
}

// Where says where the state is, for banners and `nanobot status`.
func (s *Set) Where() string { return s.where }

// SeenKeys opens the instance's channel dedupe sets on the database, shared
// by every gateway on it; nil on the files, where each channel keeps its own
// set in memory or in a file under the home.
func (s *Set) SeenKeys(inst protocol.Instance) func(set string, n int) channels.SeenKeys {
	if s.DB == nil {
		return nil
	}
	return func(set string, n int) channels.SeenKeys { return s.DB.SeenKeys(inst.Name(set), n, s.lease) }
}

// ChannelState opens the instance's channel state (sync and context tokens)
// on the database, shared by every gateway on it; nil on the files, where
// each channel keeps it in a file under the home.
func (s *Set) ChannelState(inst protocol.Instance) func(channel string) channels.StateStore {
	if s.DB == nil {
		return nil
	}
	if inst == "" {
		inst = protocol.DefaultInstance
	}
	return func(channel string) channels.StateStore { return s.DB.ChannelState(string(inst), channel) }
}

// ClaimLease is the lease of a gateway's claims: NANOBOT_CLAIM_LEASE_S long
// (pgstore.DefaultClaimLease when unset or 0), held by this host and home, so
// the same gateway restarted takes back what it claimed before a kill.
func ClaimLease(home string) pgstore.Lease {
	host, err := os.Hostname()
	if err != nil {
		host = "unnamed-host"
	}
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	return pgstore.Lease{Length: config.EnvSeconds("NANOBOT_CLAIM_LEASE_S", 0), Holder: host + ":" + home}
}

// Media is the instance's media store for a process whose config names
// workspace: a file fetched from the database goes into its media/ when
// the process holds it, else into a cache outside the home. On the files
// every path is already local.
func (s *Set) Media(inst protocol.Instance, workspace string, holdsWorkspace bool) media.Store {
	if s.DB == nil {
		return media.Files{}
	}
	inst = protocol.Instance(instanceName(inst))
	fetchedInto := media.Dir("")
	if holdsWorkspace {
		fetchedInto = media.Dir(workspace)
	}
	return s.DB.Media(string(inst), workspace, fetchedInto)
}

// Close closes the database, if any.
func (s *Set) Close() {
	if s.DB != nil {
		s.DB.Close()
	}
}
