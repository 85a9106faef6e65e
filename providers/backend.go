package providers

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
)

// API surfaces a providers.<name>.apiType may ask for (nanobot's api_type).
const (
	APITypeAuto            = "auto"
	APITypeChatCompletions = "chat_completions"
	APITypeResponses       = "responses"
)

// AzureAPIVersion is the api-version nanobot's Azure provider pins;
// providers.azure_openai.extraQuery can send another.
const AzureAPIVersion = "2024-10-21"

// checkAPIType refuses an apiType the entry's backend cannot honour,
// naming the key, instead of ignoring it.
func checkAPIType(s Spec, entry, apiType string) error {
	switch strings.ToLower(strings.TrimSpace(apiType)) {
	case "", APITypeAuto, APITypeChatCompletions:
		return nil
	case APITypeResponses:
		if s.Wire() == BackendAnthropic {
			return &ConfigError{Msg: fmt.Sprintf(
				"providers.%s.apiType %q: %s speaks Anthropic's Messages API, not OpenAI's Responses API; remove apiType",
				entry, apiType, s.Name)}
		}
		return nil
	}
	return &ConfigError{Msg: fmt.Sprintf(
		"providers.%s.apiType %q is not one of %q, %q or %q", entry, apiType, APITypeAuto, APITypeChatCompletions, APITypeResponses)}
}

// wantsResponses: apiType "responses" chooses OpenAI's Responses API.
func wantsResponses(res Resolution) bool {
	return strings.EqualFold(strings.TrimSpace(res.Config.APIType), APITypeResponses)
}

// client builds the wire client for a resolution by its spec's backend
// (nanobot's factory): the Messages API, Azure's deployment endpoints, the
// Responses API, or chat completions.
func (f *Factory) client(res Resolution, headers map[string]string) Provider {
	opts := OpenAIOptions{
		BaseURL: res.APIBase, APIKey: res.APIKey, ExtraHeaders: headers, ExtraQuery: res.Config.ExtraQuery,
		HTTPClient: f.httpClient(res.Config.Proxy), Timeout: f.Timeout, StreamIdleTimeout: f.StreamIdleTimeout,
		UseMaxCompletionTokens: res.Spec.SupportsMaxCompletionTokens, PromptCaching: res.Spec.SupportsPromptCaching && cachingAllowed(res),
	}
	switch res.Spec.Wire() {
	case BackendAnthropic:
		return NewAnthropic(AnthropicOptions{
			BaseURL: res.APIBase, APIKey: res.APIKey, ExtraHeaders: headers, ExtraQuery: res.Config.ExtraQuery,
			HTTPClient: opts.HTTPClient, Timeout: f.Timeout, StreamIdleTimeout: f.StreamIdleTimeout,
			PromptCaching: cachingAllowed(res),
		})
	case BackendAzureOpenAI:
		return azureClient(res, opts)
	}
	if wantsResponses(res) {
		return NewOpenAIResponses(opts)
	}
	return NewOpenAICompatible(opts)
}

// cachingAllowed: providers.<name>.promptCaching false turns the breakpoints
// off; unset leaves them to the backend (always on for the Messages API).
func cachingAllowed(res Resolution) bool {
	return res.Config.PromptCaching == nil || *res.Config.PromptCaching
}

// azureClient addresses a deployment as nanobot's Azure provider does: the
// model is the deployment, in the path, with api-version in the query and
// the key in the api-key header. apiType "responses" uses Azure's v1
// Responses endpoint instead (nanobot's newer Azure provider).
func azureClient(res Resolution, opts OpenAIOptions) Provider {
	root := strings.TrimRight(res.APIBase, "/")
	opts.APIKeyHeader = "api-key"
	opts.ExtraHeaders = withDefault(opts.ExtraHeaders, "x-session-affinity", sessionAffinity())
	if wantsResponses(res) {
		opts.BaseURL = root + "/openai/v1"
		return NewOpenAIResponses(opts)
	}
	opts.BaseURL = root + "/openai/deployments/" + url.PathEscape(res.APIModel)
	opts.ExtraQuery = withDefault(opts.ExtraQuery, "api-version", AzureAPIVersion)
	return NewOpenAICompatible(opts)
}

// withDefault copies m with key set to value unless m has it.
func withDefault(m map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sessionAffinity is the x-session-affinity nanobot sends Azure, one per
// client, so its requests land where their prompt is cached.
func sessionAffinity() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
