package media_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/media"
)

func TestKeptNameIsWhatFollowsTheLastMediaFolder(t *testing.T) {
	for ref, want := range map[string]string{
		"/home/gw/.nanobot/workspace/media/discord-1-photo.png": "discord-1-photo.png",
		"/srv/media/old/workspace/media/feishu/a.png":           filepath.Join("feishu", "a.png"),
		"/home/w/.nanobot/workspace/report.txt":                 "report.txt",
		"/x/media/../../etc/passwd":                             "passwd",
		"/":                                                     "file",
	} {
		require.Equal(t, want, media.KeptName(ref), ref)
	}
}

// failing is a store whose database is down.
type failing struct{ media.Files }

func (failing) Local(context.Context, string) (string, error) { return "", errors.New("database down") }

func TestLocalAllKeepsMissingRefsAndReturnsOtherErrors(t *testing.T) {
	ctx := context.Background()
	refs := []string{"https://example.com/a.png", filepath.Join(t.TempDir(), "gone.png")}
	got, err := media.LocalAll(ctx, media.Files{}, refs)
	require.NoError(t, err)
	require.Equal(t, refs, got, "a URL passes, a ref nobody has is kept for the reader to report")
	_, err = media.LocalAll(ctx, failing{}, refs)
	require.ErrorContains(t, err, "database down", "a failure that may pass fails the caller, to be retried")
}
