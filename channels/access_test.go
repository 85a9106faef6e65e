package channels

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDistinct: values are trimmed, blanks and repeats dropped, the order kept.
func TestDistinct(t *testing.T) {
	require.Equal(t, []string{"+1555", "abc-uuid"}, Distinct("+1555", " +1555 ", "", "  ", "abc-uuid", "+1555"))
	require.Nil(t, Distinct("", " "))
	require.Nil(t, Distinct())
}
