package channels

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChatHistoryKeepsTheLastMessagesBeforeTheNewest: each chat keeps its
// own last size messages, cut long; the context leaves out the newest.
func TestChatHistoryKeepsTheLastMessagesBeforeTheNewest(t *testing.T) {
	h := NewChatHistory(3)
	require.Empty(t, h.Context("g1"))
	h.Add("g1", "Ann", "one")
	require.Empty(t, h.Context("g1"), "the newest message alone is no context")
	h.Add("g1", "Bob", "two")
	h.Add("g2", "Cy", "elsewhere")
	h.Add("g1", "Ann", "three")
	h.Add("g1", "Bob", strings.Repeat("x", 300))
	require.Equal(t, "[Recent group messages for context:]\nBob: two\nAnn: three\n---\n", h.Context("g1"))
	require.Len(t, h.msgs["g1"][2], len("Bob: ")+maxHistoryRunes)
	require.Empty(t, h.Context("g2"))
}
