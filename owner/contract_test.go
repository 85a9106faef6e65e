package owner_test

import (
	"testing"

	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/storetest"
)

// TestFileContract: two stores on one file are two processes of one home.
func TestFileContract(t *testing.T) {
	storetest.OwnerKey(t, func(t *testing.T) storetest.Open[owner.Store] {
		home := t.TempDir()
		return func(*testing.T) owner.Store { return owner.FileIn(home) }
	})
}
