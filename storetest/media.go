package storetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/media"
)

// Media runs the media store's contract. Each Open is another host with a
// folder of its own; shared backends (a database) also hand a file shared
// on one host to a host that lacks it.
func Media(t *testing.T, fresh Fresh[media.Store], shared bool) {
	tests := []test[media.Store]{
		{"AFileOfThisHostIsItsOwnPath", mediaOwnFile},
		{"URLsPassAndMissingRefsAreNotFound", mediaURLAndMissing},
	}
	if shared {
		tests = append(tests,
			test[media.Store]{"AnotherHostFetchesOnce", mediaOtherHost},
			test[media.Store]{"ChangedBytesReachOtherHosts", mediaChanged},
			test[media.Store]{"ATakenNameIsLeftAlone", mediaTakenName},
		)
	}
	run(t, fresh, tests)
}

// gatewayFile writes a file as a channel saves a download: under a workspace's media/.
func gatewayFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "workspace", "media", name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func mediaOwnFile(t *testing.T, open Open[media.Store]) {
	ctx := context.Background()
	s := open(t)
	shared := gatewayFile(t, "discord-1-photo.png", "png bytes")
	require.NoError(t, s.Share(ctx, shared))
	got, err := s.Local(ctx, shared)
	require.NoError(t, err)
	require.Equal(t, shared, got, "the host that has the file reads it where it is, no copy")
	own := filepath.Join(t.TempDir(), "report.txt") // a workspace file nobody shared
	require.NoError(t, os.WriteFile(own, []byte("mine"), 0o600))
	got, err = s.Local(ctx, own)
	require.NoError(t, err)
	require.Equal(t, own, got)
}

func mediaURLAndMissing(t *testing.T, open Open[media.Store]) {
	ctx := context.Background()
	s := open(t)
	const url = "https://example.com/cat.png"
	require.NoError(t, s.Share(ctx, url))
	got, err := s.Local(ctx, url)
	require.NoError(t, err)
	require.Equal(t, url, got)
	missing := filepath.Join(t.TempDir(), "media", "gone.png")
	_, err = s.Local(ctx, missing)
	require.ErrorIs(t, err, media.ErrNotFound)
	require.ErrorContains(t, err, missing, "the error names the ref")
}

func mediaOtherHost(t *testing.T, open Open[media.Store]) {
	ctx := context.Background()
	gateway, workspace := open(t), open(t)
	ref := gatewayFile(t, "sub/discord-2-photo.png", "the photo's bytes")
	require.NoError(t, gateway.Share(ctx, ref))
	require.NoError(t, gateway.Share(ctx, ref), "sharing again is harmless")
	require.NoError(t, os.Remove(ref)) // the other host never had it
	require.ErrorContains(t, gateway.Share(ctx, ref), ref, "a file that is not there cannot be shared")

	got, err := workspace.Local(ctx, ref)
	require.NoError(t, err)
	require.NotEqual(t, ref, got)
	require.Equal(t, filepath.Join("sub", "discord-2-photo.png"), filepath.Join(filepath.Base(filepath.Dir(got)), filepath.Base(got)),
		"the copy keeps the name the channel gave it")
	data, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Equal(t, "the photo's bytes", string(data))
	first, err := os.Stat(got)
	require.NoError(t, err)

	again, err := workspace.Local(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, got, again)
	second, err := os.Stat(again)
	require.NoError(t, err)
	require.True(t, os.SameFile(first, second), "the second read is the first copy, not a second write")
}

func mediaChanged(t *testing.T, open Open[media.Store]) {
	ctx := context.Background()
	gateway, workspace := open(t), open(t)
	ref := gatewayFile(t, "web-voice.ogg", "first note")
	require.NoError(t, gateway.Share(ctx, ref))
	got, err := workspace.Local(ctx, ref)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(ref, []byte("second note, longer"), 0o600)) // a channel reused the name
	require.NoError(t, gateway.Share(ctx, ref))
	require.NoError(t, os.Remove(ref))
	now, err := workspace.Local(ctx, ref)
	require.NoError(t, err)
	data, err := os.ReadFile(now)
	require.NoError(t, err)
	require.Equal(t, "second note, longer", string(data), "the other host reads the new bytes, not its old copy (%s)", got)
}

func mediaTakenName(t *testing.T, open Open[media.Store]) {
	ctx := context.Background()
	gateway, workspace := open(t), open(t)
	ref := gatewayFile(t, "photo.png", "the gateway's photo")
	require.NoError(t, gateway.Share(ctx, ref))
	require.NoError(t, os.Remove(ref))
	first, err := workspace.Local(ctx, ref)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(first, []byte("a file of the workspace's own"), 0o600)) // the model wrote over the copy

	got, err := workspace.Local(ctx, ref)
	require.NoError(t, err)
	require.NotEqual(t, first, got, "the workspace's file keeps its name")
	data, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Equal(t, "the gateway's photo", string(data))
	mine, err := os.ReadFile(first)
	require.NoError(t, err)
	require.Equal(t, "a file of the workspace's own", string(mine), "and its content")
}
