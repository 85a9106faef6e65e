package activities

import (
	"context"
	"fmt"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Liveness makes every activity whose options carry a heartbeat timeout
// beat from a goroutine for as long as it runs, every third of that timeout
// (0.83 s at protocol.HeartbeatTimeout), so a worker that vanishes is noticed
// within the timeout whatever the activity waits on: a model, a command, a
// platform's API, a slot. Workers install it (workers.Start).
type Liveness struct {
	interceptor.WorkerInterceptorBase
}

// InterceptActivity wraps each activity of the worker.
func (*Liveness) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &livenessInbound{}
	i.Next = next
	return i
}

type livenessInbound struct {
	interceptor.ActivityInboundInterceptorBase
}

func (i *livenessInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	info := activity.GetInfo(ctx)
	timeout := info.HeartbeatTimeout
	if timeout <= 0 { // local activities and activities scheduled without one
		return i.Next.ExecuteActivity(ctx, in)
	}
	if info.Attempt > 1 {
		unstick(ctx, info)
	}
	b := newBeater(ctx, BeatInterval(timeout), func(details ...any) { activity.RecordHeartbeat(ctx, details...) })
	defer b.start()()
	return i.Next.ExecuteActivity(context.WithValue(ctx, beaterKey{}, b), in)
}

// unstick: the worker of the last attempt may be gone.
func unstick(ctx context.Context, info activity.Info) {
	if c := activity.GetClient(ctx); c != nil {
		if err := ResetSticky(ctx, c, info.WorkflowNamespace, info.WorkflowExecution.ID, info.WorkflowExecution.RunID); err != nil {
			activity.GetLogger(ctx).Warn("a retried attempt could not reset its workflow's sticky queue", "error", err)
		}
	}
}

// ResetSticky sends a workflow's next task to its shared queue: its sticky
// queue may belong to a worker that is gone, which would hold the task until
// the sticky schedule-to-start timeout.
func ResetSticky(ctx context.Context, c client.Client, namespace, workflowID, runID string) error {
	_, err := c.WorkflowService().ResetStickyTaskQueue(ctx, &workflowservice.ResetStickyTaskQueueRequest{
		Namespace: namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: runID},
	})
	if err != nil {
		return fmt.Errorf("reset the sticky queue of %s: %w", workflowID, err)
	}
	return nil
}

// BeatInterval leaves two beats' slack before the timeout: a beat may be late
// or lost (a loaded machine, a slow server) without the attempt failing.
func BeatInterval(timeout time.Duration) time.Duration {
	return max(timeout/3, 100*time.Millisecond)
}

type beaterKey struct{}

// beater records an activity's heartbeats; details, once set, go with each.
type beater struct {
	ctx    context.Context
	every  time.Duration
	record func(details ...any)
	now    func() time.Time
	done   chan struct{}

	mu      sync.Mutex
	last    time.Time
	details []any
	stopped bool
}

func newBeater(ctx context.Context, every time.Duration, record func(details ...any)) *beater {
	return &beater{ctx: ctx, every: every, record: record, now: time.Now, last: time.Now(), done: make(chan struct{})}
}

// start beats every b.every until the returned stop, which returns once the
// ticker's goroutine has ended and no beat runs or can start: a beat after
// the activity returned would reach the server after its completion.
func (b *beater) start() (stop func()) {
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		b.run()
	}()
	return func() {
		b.mu.Lock() // waits out a beat in flight
		b.stopped = true
		b.mu.Unlock()
		close(b.done)
		<-ended
	}
}

func (b *beater) run() {
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-b.done:
			return
		case <-b.ctx.Done():
			return
		case <-t.C:
			b.beat(true)
		}
	}
}

// beat records a heartbeat; unless forced, only when one is due.
func (b *beater) beat(force bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped || !force && b.now().Sub(b.last) < b.every {
		return
	}
	b.last = b.now()
	b.record(b.details...)
}

func beaterOf(ctx context.Context) *beater {
	b, _ := ctx.Value(beaterKey{}).(*beater)
	return b
}

// beatOnProgress beats when a beat is due and the activity just made
// progress (a streamed chunk); the ticker beats between chunks.
func beatOnProgress(ctx context.Context) {
	if b := beaterOf(ctx); b != nil {
		b.beat(false)
	}
}

// setBeatDetails makes every later beat of this activity carry details (a
// delivery's progress), so a plain beat never overwrites them on the server.
func setBeatDetails(ctx context.Context, details any) {
	if b := beaterOf(ctx); b != nil {
		b.mu.Lock()
		b.details = []any{details}
		b.mu.Unlock()
	}
}

// paced gives a retryable error of a model or tool call the wait of
// protocol.ErrorBackoff: their retry policies start at protocol.RetryAtOnce,
// which is meant for attempts that timed out with their worker.
func paced(ctx context.Context, err error) error {
	if err == nil || !activity.IsActivity(ctx) || ctx.Err() != nil { // stopped: the next worker retries at once
		return err
	}
	return pacedAt(activity.GetInfo(ctx).Attempt, err)
}

func pacedAt(attempt int32, err error) error {
	if err == nil {
		return nil
	}
	delay := protocol.ErrorBackoff(attempt)
	switch e := err.(type) { // the SDK converts only the top-level error's type
	case *temporal.ApplicationError:
		if e.NonRetryable() || e.NextRetryDelay() > 0 {
			return err
		}
		return temporal.NewApplicationErrorWithOptions(e.Message(), e.Type(),
			temporal.ApplicationErrorOptions{Cause: e.Unwrap(), NextRetryDelay: delay, Category: e.Category()})
	case *temporal.CanceledError, *temporal.TimeoutError, *temporal.PanicError:
		return err
	}
	return temporal.NewApplicationErrorWithOptions(err.Error(), "", temporal.ApplicationErrorOptions{NextRetryDelay: delay})
}
