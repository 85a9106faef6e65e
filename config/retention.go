package config

import "time"

// Retention is how long nanobot keeps what piles up on disk (a key nanobot
// does not have; absent from a config, the defaults below apply). Every
// field left out takes its default; 0 keeps that kind forever.
type Retention struct {
	// MediaDays: downloads under <workspace>/media and shared media rows
	// older than this go, unless a session's unarchived messages name them.
	MediaDays *int `json:"mediaDays,omitempty"`
	// TempHours: copies fetched from the database into the temp cache,
	// refetched on demand, go after this long unused.
	TempHours *int `json:"tempHours,omitempty"`
	// SessionDays: sessions untouched this long whose messages are all
	// archived into memory (and Dream's and subagents' own) are removed.
	SessionDays *int `json:"sessionDays,omitempty"`
	// TemporalDays is the embedded Temporal's namespace retention: how long
	// the Web UI shows a finished turn's history.
	TemporalDays *int `json:"temporalDays,omitempty"`
	// IntervalH is how often the upkeep schedule runs `nanobot gc`'s rules; 0 = never.
	IntervalH *int `json:"intervalH,omitempty"`
}

// Defaults for a personal agent: a month of attachments, a day of cache,
// a quarter of idle archived sessions, three days of turn histories in the
// Web UI, a sweep a day.
const (
	DefaultMediaDays    = 30
	DefaultTempHours    = 24
	DefaultSessionDays  = 90
	DefaultTemporalDays = 3
	DefaultGCIntervalH  = 24
)

// Ages are the retention settings resolved: 0 keeps that kind forever.
type Ages struct {
	Media, Temp, Sessions, Temporal, Interval time.Duration
}

// Ages resolves the settings against their defaults; a negative value keeps forever, as 0 does.
func (r Retention) Ages() Ages {
	get := func(v *int, def int, unit time.Duration) time.Duration {
		if v == nil {
			return time.Duration(def) * unit
		}
		return time.Duration(max(*v, 0)) * unit
	}
	day := 24 * time.Hour
	return Ages{
		Media:    get(r.MediaDays, DefaultMediaDays, day),
		Temp:     get(r.TempHours, DefaultTempHours, time.Hour),
		Sessions: get(r.SessionDays, DefaultSessionDays, day),
		Temporal: get(r.TemporalDays, DefaultTemporalDays, day),
		Interval: get(r.IntervalH, DefaultGCIntervalH, time.Hour),
	}
}
