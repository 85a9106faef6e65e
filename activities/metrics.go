package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/protocol"
)

// metricsOf is the worker's metrics handler; nil when called outside a worker (benchmark baselines).
func metricsOf(ctx context.Context) client.MetricsHandler {
	if !activity.IsActivity(ctx) {
		return nil
	}
	return activity.GetMetricsHandler(ctx)
}

// countModelCall records a model call's latency and tokens; a reply found in
// the journal was counted when it was made.
func countModelCall(m client.MetricsHandler, model string, res protocol.LLMCallResult, err error, took time.Duration) {
	if err != nil {
		countError(m, err)
		return
	}
	if res.FromJournal {
		return
	}
	if res.Model != "" {
		model = res.Model
	}
	countModelUse(m, model, res.PromptTokens, res.CompletionTokens, res.CachedTokens, took)
}

// countModelUse records one answered model call: latency and tokens by kind.
func countModelUse(m client.MetricsHandler, model string, prompt, completion, cached int, took time.Duration) {
	mm := m.WithTags(map[string]string{"model": model})
	mm.Timer(protocol.MetricModelLatency).Record(took)
	for kind, n := range map[string]int{"prompt": prompt, "completion": completion, "cached": cached} {
		mm.WithTags(map[string]string{"kind": kind}).Counter(protocol.MetricTokens).Inc(int64(n))
	}
}

// countToolCall records a tool call's outcome.
func countToolCall(m client.MetricsHandler, tool string, res protocol.ToolCallResult, err error) {
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "failed"
		countError(m, err)
	case res.Unknown:
		outcome = "unknown"
	case res.IsError:
		outcome = "error"
	}
	m.WithTags(map[string]string{"tool": tool, "outcome": outcome}).Counter(protocol.MetricToolCalls).Inc(1)
}

// countError counts a failed activity by its error type ("other" when untyped).
func countError(m client.MetricsHandler, err error) {
	class := "other"
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() != "" {
		class = appErr.Type()
	}
	m.WithTags(map[string]string{"class": class}).Counter(protocol.MetricErrors).Inc(1)
}
