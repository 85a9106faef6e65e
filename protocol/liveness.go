package protocol

import "time"

// HeartbeatTimeout is how soon a lost worker is noticed: a regular activity
// that has not beaten for this long is retried on another worker, and so is
// a workflow task (temporal-dev's history.defaultWorkflowTaskTimeout) or one
// left waiting on a gone worker's sticky queue (workers.Start). Activities
// beat every third of it (activities.Liveness), so two beats may be late or
// lost (a loaded 2-core machine, a busy server; Go's GC pauses are well under
// a millisecond) before an attempt fails; and with the retry at once and the
// dispatch (~0.1 s) on top, a turn whose host vanished resumes within 3 s.
// A turn's model and tool calls take theirs from Settings.LLMHeartbeat
// (NANOBOT_LLM_HEARTBEAT_TIMEOUT_S, default this).
const HeartbeatTimeout = 2500 * time.Millisecond

// RetryAtOnce is the first retry interval of the model and tool calls: an
// attempt that timed out lost its worker, and its retry should not wait.
// The calls' own retryable errors wait ErrorBackoff instead.
const RetryAtOnce = 10 * time.Millisecond

// ErrorBackoff is the wait before retrying a model or tool call that failed
// with a retryable error of its own: 1 s, doubling, at most a minute.
func ErrorBackoff(attempt int32) time.Duration {
	d := time.Second
	for i := int32(1); i < attempt && d < time.Minute; i++ {
		d *= 2
	}
	return min(d, time.Minute)
}
