package memory_test

import (
	"testing"

	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/storetest"
)

// TestFilesContract: two Files on one workspace are two processes of one host.
func TestFilesContract(t *testing.T) {
	storetest.Archive(t, func(t *testing.T) storetest.Open[memory.Archive] {
		ws := t.TempDir()
		return func(*testing.T) memory.Archive { return memory.Files{Workspace: ws} }
	})
}
