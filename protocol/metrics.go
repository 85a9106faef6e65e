package protocol

// Names of nanobot's metrics, counted through the Temporal SDK's metrics
// handler (workflow code: skipped on replay) and served by the gateway.
const (
	MetricTurns        = "nanobot_turns_total"      // tags: stop_reason
	MetricIterations   = "nanobot_iterations_total" // model calls of turns and subagents
	MetricToolCalls    = "nanobot_tool_calls_total" // tags: tool, outcome (ok|error|unknown|failed)
	MetricModelLatency = "nanobot_model_latency"    // a timer, served as a seconds histogram; tags: model
	MetricTokens       = "nanobot_tokens_total"     // tags: model, kind (prompt|completion|cached)
	MetricErrors       = "nanobot_errors_total"     // tags: class
)
