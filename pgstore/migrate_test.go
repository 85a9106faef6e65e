package pgstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/pgstore"
)

func TestMigrationsApplyOnceEvenWhenHostsStartTogether(t *testing.T) {
	url, ctx := pgtest.Database(t), context.Background()
	db, err := pgstore.Connect(ctx, url, nil)
	require.NoError(t, err)
	defer db.Close()
	states, err := db.Status(ctx)
	require.NoError(t, err)
	all, err := pgstore.Migrations()
	require.NoError(t, err)
	require.Len(t, states, len(all))
	for _, s := range states {
		require.False(t, s.Applied, "a fresh database has none")
	}

	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() { // six hosts start at once
			defer wg.Done()
			db, err := pgstore.Open(ctx, url, nil)
			if err == nil {
				db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	states, err = db.Status(ctx)
	require.NoError(t, err)
	for _, s := range states {
		require.True(t, s.Applied, "%04d_%s", s.Version, s.Name)
		require.False(t, s.Unknown)
	}
	done, err := db.Migrate(ctx)
	require.NoError(t, err)
	require.Empty(t, done, "nothing left to apply")

	_, err = db.Pool().Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES (9999, 'future')`)
	require.NoError(t, err)
	states, err = db.Status(ctx)
	require.NoError(t, err)
	last := states[len(states)-1]
	require.True(t, last.Unknown, "a version from a newer nanobot is shown as such")
	require.Equal(t, 9999, last.Version)
}

func TestBadURLsSayWhatIsWrongWithoutThePassword(t *testing.T) {
	_, err := pgstore.Open(context.Background(), "postgres://u:sekret@127.0.0.1:1/x?connect_timeout=2", nil)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "sekret")
	require.Contains(t, err.Error(), "127.0.0.1:1")
	_, err = pgstore.Open(context.Background(), "postgres://u:sekret@127.0.0.1:notaport/x", nil)
	require.ErrorContains(t, err, "not a PostgreSQL URL")
	require.NotContains(t, err.Error(), "sekret")
	require.Equal(t, "sekret", pgstore.Password("postgres://u:sekret@h/x"))
	require.Equal(t, "", pgstore.Password("postgres://u@h/x"))
}
