package stores_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/stores"
	"github.com/nanobot-durable/nanobot/usage"
)

func TestOpenIsTheFilesUnlessADatabaseIsNamed(t *testing.T) {
	ctx := context.Background()
	cfg := home(t)
	files, err := stores.Open(ctx, cfg, nil)
	require.NoError(t, err)
	defer files.Close()
	require.IsType(t, &session.JSONLStore{}, files.Sessions)
	require.IsType(t, &usage.File{}, files.Usage)
	require.IsType(t, memory.Files{}, files.Archive)
	require.Nil(t, files.DB)
	require.Contains(t, files.Where(), "files under")

	cfg.Database.URL = "postgres://u:sekret@127.0.0.1:1/x?connect_timeout=2"
	_, err = stores.Open(ctx, cfg, nil)
	require.ErrorContains(t, err, "database.url: connect to PostgreSQL", "an unreachable database fails the start, naming the key")
	require.NotContains(t, err.Error(), "sekret")

	cfg.Database.URL = pgtest.Database(t)
	pg, err := stores.Open(ctx, cfg, nil)
	require.NoError(t, err)
	defer pg.Close()
	require.IsType(t, &pgstore.Sessions{}, pg.Sessions)
	require.IsType(t, &pgstore.Usage{}, pg.Usage)
	require.IsType(t, &pgstore.Archive{}, pg.Archive)
	require.Contains(t, pg.Where(), "PostgreSQL postgres://")
	states, err := pg.DB.Status(ctx)
	require.NoError(t, err)
	require.True(t, states[0].Applied, "opening migrates")
}

// TestThePromptReadsTheDatabaseArchive: Recent History comes from the
// database, and the prompt names no history file the model could grep.
func TestThePromptReadsTheDatabaseArchive(t *testing.T) {
	ctx := context.Background()
	cfg := home(t)
	cfg.Database.URL = pgtest.Database(t)
	pg, err := stores.Open(ctx, cfg, nil)
	require.NoError(t, err)
	defer pg.Close()
	_, err = pg.Archive.Append(ctx, memory.Entry{Content: "The user likes green tea.", SessionKey: "cli:a"})
	require.NoError(t, err)
	b := prompt.Builder{Workspace: cfg.Agents.Defaults.WorkspacePath(), Archive: pg.Archive}
	text, err := b.SystemPrompt(prompt.Request{Channel: "cli", SessionKey: "cli:a"})
	require.NoError(t, err)
	require.Contains(t, text, "# Recent History")
	require.Contains(t, text, "The user likes green tea.")
	require.NotContains(t, text, "History log:")

	files := prompt.Builder{Workspace: cfg.Agents.Defaults.WorkspacePath()}
	text, err = files.SystemPrompt(prompt.Request{Channel: "cli", SessionKey: "cli:a"})
	require.NoError(t, err)
	require.Contains(t, text, "History log: "+memory.HistoryPath(cfg.Agents.Defaults.WorkspacePath()))
	require.NotContains(t, text, "green tea", "the files know nothing of the database's archive")
}

// TestSeenKeysAreSharedOnTheDatabaseOnly: two processes on one database
// open one dedupe set per instance; the files open none (each channel
// keeps its own).
func TestSeenKeysAreSharedOnTheDatabaseOnly(t *testing.T) {
	files, one, other := filesAndTwoOnADatabase(t)
	require.Nil(t, files.SeenKeys(protocol.DefaultInstance), "the files keep today's per-channel sets")
	require.False(t, one.SeenKeys(protocol.DefaultInstance)("telegram-updates", 10).Add("7"))
	require.True(t, other.SeenKeys(protocol.DefaultInstance)("telegram-updates", 10).Has("7"), "another gateway sees the key")
	require.False(t, other.SeenKeys(protocol.DefaultInstance)("slack-events", 10).Has("7"), "sets are apart")
	work, err := protocol.ParseInstance("work")
	require.NoError(t, err)
	require.False(t, other.SeenKeys(work)("telegram-updates", 10).Add("7"), "another instance, another bot: its own set")
}

// filesAndTwoOnADatabase is a set on a home's files and two processes' sets on one database.
func filesAndTwoOnADatabase(t *testing.T) (files, one, other *stores.Set) {
	cfg := home(t)
	open := func() *stores.Set {
		s, err := stores.Open(context.Background(), cfg, nil)
		require.NoError(t, err)
		t.Cleanup(s.Close)
		return s
	}
	files = open()
	cfg.Database.URL = pgtest.Database(t)
	return files, open(), open()
}

// TestChannelStateIsSharedOnTheDatabaseOnly: two processes on one database
// read one channel state per instance (the unnamed instance is "default");
// the files open none (each channel keeps its own file).
func TestChannelStateIsSharedOnTheDatabaseOnly(t *testing.T) {
	files, one, other := filesAndTwoOnADatabase(t)
	require.Nil(t, files.ChannelState(protocol.DefaultInstance), "the files keep each channel's own")
	require.NoError(t, one.ChannelState("")("matrix").Put("next_batch:@bot:hs", "s1"))
	got, err := other.ChannelState(protocol.DefaultInstance)("matrix").Get("next_batch:@bot:hs")
	require.NoError(t, err)
	require.Equal(t, "s1", got, "another gateway reads it")
	work, err := protocol.ParseInstance("work")
	require.NoError(t, err)
	got, err = other.ChannelState(work)("matrix").Get("next_batch:@bot:hs")
	require.NoError(t, err)
	require.Empty(t, got, "another instance, another bot: its own state")
}

// TestEveryHostOnADatabaseHoldsTheFirstHostsOwnerKey: the files give each
// home its own key (owner.key, made when missing); on a database the first
// host's key is the instance's, so a worker of another home checks the
// proofs the gateway made.
func TestEveryHostOnADatabaseHoldsTheFirstHostsOwnerKey(t *testing.T) {
	ctx := context.Background()
	a, b := home(t), home(t)
	keys := func() (owner.Key, owner.Key) { // a's process, then b's
		var out [2]owner.Key
		for i, cfg := range []*config.Config{a, b} {
			st, err := stores.Open(ctx, cfg, nil)
			require.NoError(t, err)
			out[i] = st.Owner
			st.Close()
		}
		return out[0], out[1]
	}
	onA, onB := keys()
	require.True(t, onA.Valid())
	require.False(t, onA.Equal(onB), "two homes on the files: two keys")
	fileKey, err := owner.FileIn(filepath.Dir(a.Path)).Adopt(ctx, owner.Key{})
	require.NoError(t, err)
	require.True(t, fileKey.Equal(onA), "the key is the home's owner.key")

	url := pgtest.Database(t)
	a.Database.URL, b.Database.URL = url, url
	require.NoError(t, os.Remove(filepath.Join(filepath.Dir(b.Path), owner.FileName)))
	first, second := keys()
	require.True(t, first.Equal(fileKey), "the first host's file key is adopted")
	require.True(t, second.Equal(first), "another home adopts the database's")
	require.NoFileExists(t, filepath.Join(filepath.Dir(b.Path), owner.FileName), "and writes no file: a stateless host keeps no state")

	// A stateless host that comes first (no file, an empty database) writes no file either.
	c := home(t)
	c.Database.URL = pgtest.Database(t)
	require.NoFileExists(t, filepath.Join(filepath.Dir(c.Path), owner.FileName))
	st, err := stores.Open(ctx, c, nil)
	require.NoError(t, err)
	defer st.Close()
	require.True(t, st.Owner.Valid())
	require.NoFileExists(t, filepath.Join(filepath.Dir(c.Path), owner.FileName), "the first host, stateless, keeps no state")
}

// TestClaimLeaseNamesTheGatewayByHostAndHome: the same home on the same host
// is the same holder across restarts; another home is another gateway.
func TestClaimLeaseNamesTheGatewayByHostAndHome(t *testing.T) {
	t.Setenv("NANOBOT_CLAIM_LEASE_S", "")
	home := t.TempDir()
	l := stores.ClaimLease(home)
	require.Zero(t, l.Length, "unset: pgstore's default")
	require.Equal(t, l.Holder, stores.ClaimLease(home).Holder)
	require.NotEqual(t, l.Holder, stores.ClaimLease(t.TempDir()).Holder)
	host, err := os.Hostname()
	require.NoError(t, err)
	require.Equal(t, host+":"+home, l.Holder)
	t.Setenv("NANOBOT_CLAIM_LEASE_S", "3")
	require.Equal(t, 3*time.Second, stores.ClaimLease(home).Length)
}
