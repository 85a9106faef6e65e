package providers

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

// defaultAnthropicMaxTokens is nanobot's chat() default, for a request
// that names no limit (max_tokens is required by the Messages API).
const defaultAnthropicMaxTokens = 4096

// claudeVersion reads family, major and minor from a Claude model name
// ("claude-opus-4-5-20251101" → opus 4.5); a minor must have at most two
// digits, so a date suffix is not taken for one.
var claudeVersion = regexp.MustCompile(`claude-([a-z]+)-(\d+)(?:-(\d+))?`)

// Claude families whose newest versions take only adaptive thinking, and
// those that think unless told not to (nanobot's _ADAPTIVE_ONLY_MIN_VERSIONS
// and _THINKING_DISABLE_MIN_VERSIONS).
var (
	adaptiveOnlySince    = map[string][2]int{"opus": {4, 7}, "sonnet": {5, 0}, "fable": {5, 0}, "mythos": {5, 0}}
	thinksByDefaultSince = map[string][2]int{"opus": {5, 0}, "sonnet": {5, 0}}
	// samplingDeprecated reject temperature but take manual thinking budgets.
	samplingDeprecated = map[string]bool{"claude-mythos-preview": true}
)

func claudeAtLeast(model string, since map[string][2]int) bool {
	lower := strings.ToLower(model)
	m := claudeVersion.FindStringSubmatchIndex(lower)
	if m == nil {
		return false
	}
	family := lower[m[2]:m[3]]
	want, ok := since[family]
	if !ok {
		return false
	}
	major, _ := strconv.Atoi(lower[m[4]:m[5]])
	minor := 0
	if m[6] >= 0 && m[7]-m[6] <= 2 && (m[7] == len(lower) || lower[m[7]] == '-') {
		minor, _ = strconv.Atoi(lower[m[6]:m[7]])
	}
	return major > want[0] || (major == want[0] && minor >= want[1])
}

// anthropicSampling is what reasoningEffort makes of a Messages request.
type anthropicSampling struct {
	thinking    anthropic.ThinkingConfigParamUnion
	output      anthropic.OutputConfigParam
	maxTokens   int64
	temperature *float64 // nil omits it
	thinkingOn  bool     // tool_choice must then stay "auto"
}

// anthropicThinking maps reasoningEffort as nanobot's _build_kwargs does:
// "adaptive" lets the model decide; low/medium/high are budgets of 1024,
// 4096 and max(8192, max_tokens) with max_tokens raised to budget+4096
// (newer models take the effort itself with adaptive thinking); "none"
// switches thinking off on models that think by default. Thinking runs at
// temperature 1; models that dropped sampling parameters get none.
func anthropicThinking(model, effort string, maxTokens int, temperature *float64) anthropicSampling {
	if maxTokens <= 0 {
		maxTokens = defaultAnthropicMaxTokens
	}
	s := anthropicSampling{maxTokens: int64(maxTokens), temperature: temperature}
	effort = strings.ToLower(strings.TrimSpace(effort))
	adaptiveOnly := claudeAtLeast(model, adaptiveOnlySince)
	omitTemperature := adaptiveOnly || samplingDeprecated[strings.ToLower(model)]
	one := 1.0
	s.thinkingOn = effort != "" && effort != "none"
	switch {
	case effort == "none":
		if claudeAtLeast(model, thinksByDefaultSince) {
			s.thinking.OfDisabled = &anthropic.ThinkingConfigDisabledParam{}
		}
	case effort == "adaptive":
		s.thinking.OfAdaptive = &anthropic.ThinkingConfigAdaptiveParam{}
		s.temperature = &one
	case s.thinkingOn && adaptiveOnly:
		s.thinking.OfAdaptive = &anthropic.ThinkingConfigAdaptiveParam{}
		s.output.Effort = anthropic.OutputConfigEffort(effort)
	case s.thinkingOn:
		budget := map[string]int{"low": 1024, "medium": 4096, "high": max(8192, maxTokens)}[effort]
		if budget == 0 {
			budget = 4096
		}
		s.thinking.OfEnabled = &anthropic.ThinkingConfigEnabledParam{BudgetTokens: int64(budget)}
		s.maxTokens = int64(max(maxTokens, budget+4096))
		s.temperature = &one
	}
	if omitTemperature {
		s.temperature = nil
	}
	return s
}

// anthropicToolChoice is nanobot's _convert_tool_choice: thinking allows
// only "auto"; "required" is "any"; a name forces that tool.
func anthropicToolChoice(choice string, thinkingOn bool) anthropic.ToolChoiceUnionParam {
	switch {
	case thinkingOn, choice == "", choice == ToolChoiceAuto:
		return anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
	case choice == ToolChoiceRequired:
		return anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
	case choice == ToolChoiceNone:
		return anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
	default:
		return anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: choice}}
	}
}
