package session_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/storetest"
)

// TestJSONLStoreContract: two JSONLStore instances on one directory are two
// processes on one host.
func TestJSONLStoreContract(t *testing.T) {
	storetest.Sessions(t, func(t *testing.T) storetest.Open[session.Store] {
		dir := t.TempDir()
		return func(t *testing.T) session.Store {
			s, err := session.NewJSONLStore(dir, nil)
			require.NoError(t, err)
			return s
		}
	})
}
