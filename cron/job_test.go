package cron

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestValidateRejectsBadJobs(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		job  Job
		want string
	}{
		"bad expression":   {Job{Message: "m", Expr: "61 * * * *"}, "invalid cron expression '61 * * * *'"},
		"six fields":       {Job{Message: "m", Expr: "0 0 9 * * *"}, "invalid cron expression"},
		"word":             {Job{Message: "m", Expr: "every morning"}, "invalid cron expression"},
		"no schedule":      {Job{Message: "m"}, "either every_seconds, cron_expr, or at is required"},
		"two schedules":    {Job{Message: "m", Every: time.Minute, Expr: "0 9 * * *"}, "only one"},
		"no message":       {Job{Every: time.Minute}, "message is required"},
		"past at":          {Job{Message: "m", At: now.Add(-time.Second)}, "in the past"},
		"bad zone":         {Job{Message: "m", Expr: "0 9 * * *", TZ: "Mars/Olympus"}, "unknown timezone 'Mars/Olympus'"},
		"sub-second every": {Job{Message: "m", Every: time.Millisecond}, "at least 1"},
	}
	for name, c := range cases {
		err := c.job.Validate(now)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), c.want, name)
	}
	for _, ok := range []Job{
		{Message: "m", Expr: "0 9 * * 1-5", TZ: "America/Vancouver"},
		{Message: "m", Expr: "*/5 * * * *"},
		{Message: "m", Expr: "@daily"},
		{Message: "m", Every: 2 * time.Second},
		{Message: "m", At: now.Add(time.Minute)},
	} {
		require.NoError(t, ok.Validate(now), "%+v", ok)
	}
}

func TestParseAtUsesTheZoneForNaiveTimes(t *testing.T) {
	at, err := ParseAt("2026-02-12T10:30:00", "America/Vancouver")
	require.NoError(t, err)
	require.Equal(t, "2026-02-12T18:30:00Z", at.UTC().Format(time.RFC3339))
	at, err = ParseAt("2026-02-12T10:30:00+02:00", "America/Vancouver")
	require.NoError(t, err)
	require.Equal(t, "2026-02-12T08:30:00Z", at.UTC().Format(time.RFC3339))
	_, err = ParseAt("tomorrow at ten", "UTC")
	require.EqualError(t, err, "invalid ISO datetime format 'tomorrow at ten'. Expected format: YYYY-MM-DDTHH:MM:SS")
}

func TestTimingAndListTexts(t *testing.T) {
	require.Equal(t, "every 5s", Job{Every: 5 * time.Second}.Timing("UTC"))
	require.Equal(t, "every 20m", Job{Every: 20 * time.Minute}.Timing("UTC"))
	require.Equal(t, "every 2h", Job{Every: 2 * time.Hour}.Timing("UTC"))
	require.Equal(t, "cron: 0 9 * * * (UTC)", Job{Expr: "0 9 * * *", TZ: "UTC"}.Timing("UTC"))
	at := time.Date(2026, 2, 12, 18, 30, 0, 0, time.UTC)
	require.Equal(t, "at 2026-02-12T10:30:00-08:00 (America/Vancouver)", Job{At: at}.Timing("America/Vancouver"))
	require.Equal(t, "No scheduled jobs.", FormatList(nil, "UTC"))
	list := FormatList([]Job{
		{ID: "ab12cd34", Name: "water", Every: 5 * time.Second, Next: []time.Time{at}},
		{ID: "dream", Name: "Dream", Every: 2 * time.Hour, Protected: true, Purpose: "Dream memory consolidation for long-term memory."},
	}, "UTC")
	require.Equal(t, strings.Join([]string{
		"Scheduled jobs:",
		"- water (id: ab12cd34, every 5s)",
		"  Next run: 2026-02-12T18:30:00Z (UTC)",
		"- Dream (id: dream, every 2h)",
		"  Purpose: Dream memory consolidation for long-term memory.",
		"  Protected: visible for inspection, but cannot be removed.",
	}, "\n"), list)
	require.Equal(t, "a message longer than thirty c", DefaultName("a message longer than thirty characters"))
	require.Equal(t, IDFor("s", "t", "c"), IDFor("s", "t", "c"))
	require.NotEqual(t, IDFor("s", "t", "c"), IDFor("s", "t", "d"))
	require.Regexp(t, `^[0-9a-f]{8}$`, NewID())
}

// TestListHasWhatThisServiceJustAdded: Temporal's schedule list lags a
// create; the jobs added here in the last minute are listed anyway, once.
func TestListHasWhatThisServiceJustAdded(t *testing.T) {
	s := &Service{}
	s.noteAdded("cron/b")
	require.Equal(t, []string{"cron/a", "cron/b"}, s.withAdded([]string{"cron/a"}), "not listed yet: added")
	require.Equal(t, []string{"cron/a", "cron/b"}, s.withAdded([]string{"cron/b", "cron/a"}), "listed: once")
	s.added["cron/b"] = time.Now().Add(-2 * visibilityLag)
	require.Equal(t, []string{"cron/a"}, s.withAdded([]string{"cron/a"}), "after the lag, the list is Temporal's")
}
