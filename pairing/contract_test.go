package pairing_test

import (
	"testing"

	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/storetest"
)

// TestFileContract: two stores on one file are two processes of one home.
func TestFileContract(t *testing.T) {
	storetest.Pairing(t, func(t *testing.T) storetest.Open[*pairing.Store] {
		dir := t.TempDir()
		return func(*testing.T) *pairing.Store { return pairing.NewStore(dir) }
	})
}
