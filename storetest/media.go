package storetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/media"
)

// MediaHost is one host's media store and the workspace its own files are under.
type MediaHost struct {
	Store     media.Store
	Workspace string
}

// Media runs the media store's contract. Each Open is another host with a
// workspace of its own; shared backends (a database) also hand a file
// shared on one host to another host, which reads its own copy.
func Media(t *testing.T, fresh Fresh[MediaHost], shared bool) {
	tests := []test[MediaHost]{
		{"AFileOfThisHostIsItsOwnPath", mediaOwnFile},
		{"URLsPassAndMissingRefsAreNotFound", mediaURLAndMissing},
	}
	if shared {
		tests = append(tests,
			test[MediaHost]{"AnotherHostFetchesOnce", mediaOtherHost},
			test[MediaHost]{"ChangedBytesReachOtherHosts", mediaChanged},
			test[MediaHost]{"ATakenNameIsLeftAlone", mediaTakenName},
		)
	}
	run(t, fresh, tests)
}

// hostFile writes a file as a channel saves a download: under the host's workspace's media/.
func hostFile(t *testing.T, h MediaHost, name, content string) string {
	t.Helper()
	path := filepath.Join(h.Workspace, "media", name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func mediaOwnFile(t *testing.T, open Open[MediaHost]) {
	ctx := context.Background()
	h := open(t)
	shared := hostFile(t, h, "discord-1-photo.png", "png bytes")
	require.NoError(t, h.Store.Share(ctx, shared))
	got, err := h.Store.Local(ctx, shared)
	require.NoError(t, err)
	require.Equal(t, shared, got, "the host that has the file reads it where it is, no copy")
	own := filepath.Join(h.Workspace, "report.txt") // a workspace file nobody shared
	require.NoError(t, os.WriteFile(own, []byte("mine"), 0o600))
	got, err = h.Store.Local(ctx, own)
	require.NoError(t, err)
	require.Equal(t, own, got)
}

func mediaURLAndMissing(t *testing.T, open Open[MediaHost]) {
	ctx := context.Background()
	h := open(t)
	const url = "https://example.com/cat.png"
	require.NoError(t, h.Store.Share(ctx, url))
	got, err := h.Store.Local(ctx, url)
	require.NoError(t, err)
	require.Equal(t, url, got)
	missing := filepath.Join(h.Workspace, "media", "gone.png")
	_, err = h.Store.Local(ctx, missing)
	require.ErrorIs(t, err, media.ErrNotFound)
	require.ErrorContains(t, err, missing, "the error names the ref")
}

func mediaOtherHost(t *testing.T, open Open[MediaHost]) {
	ctx := context.Background()
	gateway, workspace := open(t), open(t)
	ref := hostFile(t, gateway, "sub/discord-2-photo.png", "the photo's bytes")
	require.NoError(t, gateway.Store.Share(ctx, ref))
	require.NoError(t, gateway.Store.Share(ctx, ref), "sharing again is harmless")

	got, err := workspace.Store.Local(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(workspace.Workspace, "media", "sub", "discord-2-photo.png"), got,
		"the other host reads its own copy, under its workspace's media/ with the name the channel gave it, never the gateway's path")
	data, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Equal(t, "the photo's bytes", string(data))
	first, err := os.Stat(got)
	require.NoError(t, err)

	require.NoError(t, os.Remove(ref)) // the gateway's disk is gone: the copy is all there is
	again, err := workspace.Store.Local(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, got, again)
	second, err := os.Stat(again)
	require.NoError(t, err)
	require.True(t, os.SameFile(first, second), "the second read is the first copy, not a second write")
	require.ErrorContains(t, gateway.Store.Share(ctx, ref), ref, "a file that is not there cannot be shared")
}

func mediaChanged(t *testing.T, open Open[MediaHost]) {
	ctx := context.Background()
	gateway, workspace := open(t), open(t)
	ref := hostFile(t, gateway, "web-voice.ogg", "first note")
	require.NoError(t, gateway.Store.Share(ctx, ref))
	got, err := workspace.Store.Local(ctx, ref)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(ref, []byte("second note, longer"), 0o600)) // a channel reused the name
	require.NoError(t, gateway.Store.Share(ctx, ref))
	now, err := workspace.Store.Local(ctx, ref)
	require.NoError(t, err)
	data, err := os.ReadFile(now)
	require.NoError(t, err)
	require.Equal(t, "second note, longer", string(data), "the other host reads the new bytes, not its old copy (%s)", got)
}

func mediaTakenName(t *testing.T, open Open[MediaHost]) {
	ctx := context.Background()
	gateway, workspace := open(t), open(t)
	ref := hostFile(t, gateway, "photo.png", "the gateway's photo")
	require.NoError(t, gateway.Store.Share(ctx, ref))
	taken := hostFile(t, workspace, "photo.png", "a file of the workspace's own")

	got, err := workspace.Store.Local(ctx, ref)
	require.NoError(t, err)
	require.NotEqual(t, taken, got, "the workspace's file keeps its name")
	data, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Equal(t, "the gateway's photo", string(data))
	mine, err := os.ReadFile(taken)
	require.NoError(t, err)
	require.Equal(t, "a file of the workspace's own", string(mine), "and its content")
}
