package providers

import (
	"context"
	"strings"
)

// ReasoningParams maps a configured reasoningEffort onto the provider's wire
// shape, as nanobot's _build_kwargs does: the top-level reasoning_effort
// (omitted for "none") plus the body fields of the provider's and the
// model's thinking styles. A nil effort sends nothing, keeping the
// provider's default.
func (s Spec) ReasoningParams(model string, effort *string) (wireEffort string, extra map[string]any) {
	if effort == nil || strings.TrimSpace(*effort) == "" || s.ThinkingStyle == ThinkingNone {
		return "", nil
	}
	semantic := strings.ToLower(strings.TrimSpace(*effort))
	if semantic == "minimum" {
		semantic = "minimal"
	}
	wire := *effort
	lower := strings.ToLower(model)
	implicit := false
	for _, p := range s.ImplicitReasoning {
		implicit = implicit || strings.Contains(lower, p)
	}
	if mapped, ok := s.EffortRemap[semantic]; ok && !implicit {
		wire, semantic = mapped, mapped
		if mapped == "" {
			semantic = "none"
		}
	}
	if !implicit && wire != "" && semantic != "none" {
		wireEffort = wire
	}

	on := semantic != "none" && semantic != "minimal"
	slug := modelSlug(model)
	modelStyle := modelThinking[slug]
	styles := []ThinkingStyle{s.ThinkingStyle}
	if modelStyle != s.ThinkingStyle {
		styles = append(styles, modelStyle) // one switch per shape, as nanobot's _thinking_styles_for
	}
	for _, style := range styles {
		extra = mergeInto(extra, thinkingBody(style, on))
	}
	if s.GatewayReasoning && modelStyle != ThinkingEffortOnly && semantic != "" {
		extra = mergeInto(extra, map[string]any{"reasoning": map[string]any{"effort": semantic}})
	}
	if kimiThinking[slug] {
		wireEffort = "" // Moonshot rejects reasoning_effort next to its thinking switch
	}
	return wireEffort, extra
}

// thinkingBody is nanobot's _THINKING_STYLE_MAP.
func thinkingBody(style ThinkingStyle, on bool) map[string]any {
	switch style {
	case ThinkingType:
		state := "disabled"
		if on {
			state = "enabled"
		}
		return map[string]any{"thinking": map[string]any{"type": state}}
	case ThinkingEnable:
		return map[string]any{"enable_thinking": on}
	case ThinkingSplit:
		return map[string]any{"reasoning_split": on}
	}
	return nil
}

// mergeInto deep-merges src over dst, allocating dst when needed.
func mergeInto(dst, src map[string]any) map[string]any {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]any{}
	}
	return deepMerge(dst, src)
}

// bound ties a client to one configured model: it names the model on the
// wire, fills the model's settings the caller left unset, shapes reasoning
// for the provider, and reports the configured name in the Response.
type bound struct {
	client      Provider
	res         Resolution
	temperature *float64
	maxTokens   int
	effort      *string
}

var _ Provider = (*bound)(nil)

// Chat implements Provider.
func (b *bound) Chat(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	req.Model = b.res.APIModel
	if req.Temperature == nil {
		req.Temperature = b.temperature
	}
	if req.MaxTokens == 0 {
		req.MaxTokens = b.maxTokens
	}
	effort := b.effort
	if req.ReasoningEffort != "" {
		e := req.ReasoningEffort
		effort = &e
	}
	var extra map[string]any
	if b.res.Spec.Wire() == BackendAnthropic {
		// The Messages client maps the effort itself (thinking budgets, adaptive, off).
		req.ReasoningEffort = ""
		if effort != nil {
			req.ReasoningEffort = strings.TrimSpace(*effort)
		}
	} else {
		if effort != nil && !strings.EqualFold(*effort, "none") && strings.TrimSpace(*effort) != "" && b.res.Spec.ThinkingStyle != ThinkingNone {
			req.Temperature = nil // nanobot's _supports_temperature: reasoning replaces sampling temperature
		}
		req.ReasoningEffort, extra = b.res.Spec.ReasoningParams(b.res.APIModel, effort)
	}
	extra = mergeInto(extra, b.res.Config.ExtraBody) // providers.<name>.extraBody wins over our shaping
	req.ExtraBody = mergeInto(extra, req.ExtraBody)
	resp, err := b.client.Chat(ctx, req, onDelta)
	if resp != nil {
		resp.Model, resp.Provider = b.res.Model, b.res.ProviderName
	}
	return resp, err
}
