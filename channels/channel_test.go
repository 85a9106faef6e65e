package channels

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSentAtReadsThePlatformsTime: RFC 3339 with or without fractions is
// the platform's time; anything else is a time taken now, not zero.
func TestSentAtReadsThePlatformsTime(t *testing.T) {
	require.True(t, time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC).Equal(SentAt("2026-03-01T09:30:00Z")))
	require.True(t, time.Date(2026, 3, 1, 9, 30, 0, 123000000, time.UTC).Equal(SentAt("2026-03-01T10:30:00.123+01:00")))
	before := time.Now()
	got := SentAt("yesterday")
	require.False(t, got.Before(before))
	require.False(t, got.After(time.Now()))
}
