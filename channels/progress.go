package channels

import "context"

// Progress is how far the delivery of one reply got: how many of its parts
// were shown and their platform message ids. The delivery activity keeps it
// in its heartbeat details, on the Temporal server, so a retry on any
// gateway — after a crash between a send and the activity's completion —
// sends only the parts still missing.
type Progress struct {
	Sent int      `json:"sent"`
	IDs  []string `json:"ids,omitempty"`
}

type progressKey struct{}

type progressState struct {
	prior  Progress
	record func(Progress) error
}

// WithProgress hands Send what earlier attempts of this delivery did and
// how to record each part it sends (record must return once the progress
// is safe: a crash right after must not lose it).
func WithProgress(ctx context.Context, prior Progress, record func(Progress) error) context.Context {
	return context.WithValue(ctx, progressKey{}, &progressState{prior: prior, record: record})
}

// progressOf is the delivery's progress so far; without WithProgress (a
// pairing code, a test) nothing was sent before and nothing is recorded.
func progressOf(ctx context.Context) (Progress, func(Progress) error) {
	if s, ok := ctx.Value(progressKey{}).(*progressState); ok && s.record != nil {
		return s.prior, s.record
	}
	return Progress{}, func(Progress) error { return nil }
}
