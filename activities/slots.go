package activities

import "context"

// modelSlots caps the model calls one process runs at once, whichever task
// queue they came from. A worker's own slots (worker.Options, or a tuner's
// slot supplier) cannot: they are reserved per queue before a task is
// polled, for any activity type, so on the turn's queue they would cap tool
// calls too. A nil modelSlots caps nothing.
type modelSlots chan struct{}

func newModelSlots(n int) modelSlots {
	if n <= 0 {
		return nil
	}
	return make(modelSlots, n)
}

// try takes a slot if one is free now.
func (s modelSlots) try() bool {
	if s == nil {
		return true
	}
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

// wait takes a slot when one frees; waiters are handed freed slots in
// order, before a later try.
func (s modelSlots) wait(ctx context.Context) error {
	if s == nil {
		return nil
	}
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s modelSlots) release() {
	if s != nil {
		<-s
	}
}
