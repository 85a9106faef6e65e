package pgstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/media"
)

func TestMediaOverTheCapIsAnErrorNotADrop(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	big := filepath.Join(t.TempDir(), "media", "huge.mp4")
	require.NoError(t, os.MkdirAll(filepath.Dir(big), 0o755))
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(media.MaxShared+1)) // sparse: nothing written to the disk
	require.NoError(t, f.Close())

	err = open(t, url).Media("default", "", t.TempDir()).Share(ctx, big)
	require.ErrorContains(t, err, big)
	require.ErrorContains(t, err, "cap")
	require.NoError(t, os.Remove(big))
	_, err = open(t, url).Media("default", "", t.TempDir()).Local(ctx, big)
	require.ErrorIs(t, err, media.ErrNotFound, "nothing was stored")
}

func TestMediaOfInstancesAreApart(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	ref := filepath.Join(t.TempDir(), "media", "photo.png")
	require.NoError(t, os.MkdirAll(filepath.Dir(ref), 0o755))
	require.NoError(t, os.WriteFile(ref, []byte("work's photo"), 0o600))
	require.NoError(t, open(t, url).Media("work", "", t.TempDir()).Share(ctx, ref))
	require.NoError(t, os.Remove(ref))

	_, err := open(t, url).Media("home", "", t.TempDir()).Local(ctx, ref)
	require.ErrorIs(t, err, media.ErrNotFound, "another instance on the database does not see it")
	got, err := open(t, url).Media("work", "", t.TempDir()).Local(ctx, ref)
	require.NoError(t, err)
	data, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Equal(t, "work's photo", string(data))
}
