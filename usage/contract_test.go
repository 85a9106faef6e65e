package usage_test

import (
	"path/filepath"
	"testing"

	"github.com/nanobot-durable/nanobot/storetest"
	"github.com/nanobot-durable/nanobot/usage"
)

// TestFileContract: two File values on one path are two processes of one home.
func TestFileContract(t *testing.T) {
	storetest.Usage(t, func(t *testing.T) storetest.Open[usage.Store] {
		path := filepath.Join(t.TempDir(), "usage", "usage.jsonl")
		return func(*testing.T) usage.Store { return usage.Open(path) }
	})
}
