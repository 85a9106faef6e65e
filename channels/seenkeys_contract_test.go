package channels_test

import (
	"path/filepath"
	"testing"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/storetest"
)

// TestRecentKeysContract: a RecentKeys kept in a file, reopened as a restart does.
func TestRecentKeysContract(t *testing.T) {
	storetest.SeenKeys(t, func(t *testing.T) storetest.Open[channels.SeenKeys] {
		path := filepath.Join(t.TempDir(), "seen.json")
		return func(*testing.T) channels.SeenKeys { return channels.LoadRecentKeys(storetest.SeenKeysSize, path, nil) }
	}, nil)
}
