package providers

import (
	"strings"
	"unicode"
)

// ThinkingStyle says how a provider takes the reasoning on/off switch
// (nanobot's ProviderSpec.thinking_style).
type ThinkingStyle string

// Thinking styles. Every style except ThinkingNone also sends the OpenAI
// top-level reasoning_effort when the effort is not "none", as nanobot does.
const (
	// ThinkingEffortOnly sends only reasoning_effort (OpenAI, Gemini, …).
	ThinkingEffortOnly ThinkingStyle = ""
	// ThinkingType adds {"thinking":{"type":"enabled"|"disabled"}} (DeepSeek, Zhipu, VolcEngine).
	ThinkingType ThinkingStyle = "thinking_type"
	// ThinkingEnable adds {"enable_thinking":true|false} (DashScope).
	ThinkingEnable ThinkingStyle = "enable_thinking"
	// ThinkingSplit adds {"reasoning_split":true|false} (MiniMax).
	ThinkingSplit ThinkingStyle = "reasoning_split"
	// ThinkingNone sends no reasoning parameter at all: an escape hatch,
	// via providers.<name>.thinkingStyle, for servers that reject them.
	ThinkingNone ThinkingStyle = "none"
)

// Backend is the wire protocol a provider speaks (nanobot's ProviderSpec.backend).
type Backend string

// Backends. The zero value is BackendOpenAICompat.
const (
	BackendOpenAICompat Backend = "openai_compat" // chat completions (or the Responses API with apiType "responses")
	BackendAnthropic    Backend = "anthropic"     // Anthropic's Messages API, with prompt caching
	BackendAzureOpenAI  Backend = "azure_openai"  // the deployment in the path, api-version, api-key header
)

// Spec is one provider nanobot knows (its ProviderSpec).
type Spec struct {
	Name     string
	Backend  Backend  // "" is BackendOpenAICompat
	Keywords []string // lowercase substrings of model names that pick this provider
	EnvKey   string   // environment variable holding the API key when config has none
	// DefaultAPIBase is used when providers.<name>.apiBase is empty.
	DefaultAPIBase      string
	DetectByKeyPrefix   string // an API key starting with this means this provider
	DetectByBaseKeyword string // an apiBase containing this means this provider
	IsGateway           bool   // routes any vendor's model ("vendor/model" names are kept)
	IsLocal             bool   // a server on the user's machine; needs no key
	// StripModelPrefix sends only the last "/" segment of the model name.
	StripModelPrefix bool
	// SupportsMaxCompletionTokens sends max_completion_tokens for every model.
	SupportsMaxCompletionTokens bool
	ThinkingStyle               ThinkingStyle
	// GatewayReasoning adds {"reasoning":{"effort":…}} for models that have
	// their own thinking style (OpenRouter's provider-neutral switch).
	GatewayReasoning bool
	// EffortRemap rewrites efforts the provider does not accept; "" omits it.
	EffortRemap map[string]string
	// ImplicitReasoning lists model-name substrings that always reason and
	// reject reasoning_effort.
	ImplicitReasoning []string
	// Headers are sent on every request; providers.<name>.extraHeaders override them.
	Headers map[string]string
	// SupportsPromptCaching: the provider takes cache_control breakpoints
	// (for Claude models through a gateway; the Anthropic backend always sets them).
	SupportsPromptCaching bool
}

// Wire is the spec's backend, BackendOpenAICompat when none is set.
func (s Spec) Wire() Backend {
	if s.Backend == "" {
		return BackendOpenAICompat
	}
	return s.Backend
}

// registry is nanobot's PROVIDERS table (without its OAuth and Bedrock rows).
// Order is priority: gateways first, local servers last, as in nanobot.
var registry = []Spec{
	{Name: "custom"},
	// Azure: the model is the deployment name, which cannot hold a "/".
	{Name: "azure_openai", Backend: BackendAzureOpenAI, Keywords: []string{"azure", "azure-openai"},
		StripModelPrefix: true, SupportsMaxCompletionTokens: true},
	{Name: "openrouter", Keywords: []string{"openrouter"}, EnvKey: "OPENROUTER_API_KEY",
		DefaultAPIBase: "https://openrouter.ai/api/v1", DetectByKeyPrefix: "sk-or-", DetectByBaseKeyword: "openrouter",
		IsGateway: true, GatewayReasoning: true, SupportsPromptCaching: true,
		Headers: map[string]string{"HTTP-Referer": "https://github.com/HKUDS/nanobot", "X-OpenRouter-Title": "nanobot"}},
	{Name: "huggingface", Keywords: []string{"huggingface", "hugging-face"}, EnvKey: "HF_TOKEN",
		DefaultAPIBase: "https://router.huggingface.co/v1", DetectByKeyPrefix: "hf_", DetectByBaseKeyword: "huggingface",
		IsGateway: true},
	{Name: "aihubmix", Keywords: []string{"aihubmix"}, EnvKey: "AIHUBMIX_API_KEY",
		DefaultAPIBase: "https://aihubmix.com/v1", DetectByBaseKeyword: "aihubmix", IsGateway: true, StripModelPrefix: true},
	{Name: "siliconflow", Keywords: []string{"siliconflow"}, EnvKey: "SILICONFLOW_API_KEY",
		DefaultAPIBase: "https://api.siliconflow.cn/v1", DetectByBaseKeyword: "siliconflow", IsGateway: true},
	{Name: "volcengine", Keywords: []string{"volcengine", "volces", "doubao"}, EnvKey: "ARK_API_KEY",
		DefaultAPIBase: "https://ark.cn-beijing.volces.com/api/v3", DetectByBaseKeyword: "volces", IsGateway: true,
		ThinkingStyle: ThinkingType, SupportsMaxCompletionTokens: true},
	{Name: "byteplus", Keywords: []string{"byteplus"}, EnvKey: "BYTEPLUS_API_KEY",
		DefaultAPIBase: "https://ark.ap-southeast.bytepluses.com/api/v3", DetectByBaseKeyword: "bytepluses", IsGateway: true,
		StripModelPrefix: true, ThinkingStyle: ThinkingType},
	{Name: "anthropic", Backend: BackendAnthropic, Keywords: []string{"anthropic", "claude"}, EnvKey: "ANTHROPIC_API_KEY",
		DefaultAPIBase: "https://api.anthropic.com/v1", SupportsPromptCaching: true},
	{Name: "openai", Keywords: []string{"openai", "gpt"}, EnvKey: "OPENAI_API_KEY",
		DefaultAPIBase: "https://api.openai.com/v1", SupportsMaxCompletionTokens: true},
	{Name: "deepseek", Keywords: []string{"deepseek"}, EnvKey: "DEEPSEEK_API_KEY",
		DefaultAPIBase: "https://api.deepseek.com", ThinkingStyle: ThinkingType},
	{Name: "gemini", Keywords: []string{"gemini", "gemma"}, EnvKey: "GEMINI_API_KEY",
		DefaultAPIBase: "https://generativelanguage.googleapis.com/v1beta/openai"},
	{Name: "zhipu", Keywords: []string{"zhipu", "glm", "zai"}, EnvKey: "ZAI_API_KEY",
		DefaultAPIBase: "https://open.bigmodel.cn/api/paas/v4", ThinkingStyle: ThinkingType},
	{Name: "dashscope", Keywords: []string{"qwen", "dashscope"}, EnvKey: "DASHSCOPE_API_KEY",
		DefaultAPIBase: "https://dashscope.aliyuncs.com/compatible-mode/v1", ThinkingStyle: ThinkingEnable},
	{Name: "moonshot", Keywords: []string{"moonshot", "kimi"}, EnvKey: "MOONSHOT_API_KEY",
		DefaultAPIBase: "https://api.moonshot.ai/v1"},
	{Name: "kimi_coding", Backend: BackendAnthropic, Keywords: []string{"kimi-coding", "kimi_coding", "kimi-for-coding"},
		EnvKey: "KIMI_CODING_API_KEY", DefaultAPIBase: "https://api.kimi.com/coding/v1",
		Headers: map[string]string{"User-Agent": "claude-code/0.1.0"}},
	{Name: "minimax", Keywords: []string{"minimax"}, EnvKey: "MINIMAX_API_KEY",
		DefaultAPIBase: "https://api.minimax.io/v1", ThinkingStyle: ThinkingSplit},
	{Name: "minimax_anthropic", Backend: BackendAnthropic, Keywords: []string{"minimax_anthropic"}, EnvKey: "MINIMAX_API_KEY",
		DefaultAPIBase: "https://api.minimax.io/anthropic"},
	{Name: "mistral", Keywords: []string{"mistral", "magistral", "ministral", "codestral", "devstral"}, EnvKey: "MISTRAL_API_KEY",
		DefaultAPIBase:    "https://api.mistral.ai/v1",
		EffortRemap:       map[string]string{"minimal": "none", "low": "none", "medium": "high", "high": "high", "none": "none"},
		ImplicitReasoning: []string{"magistral"}},
	{Name: "stepfun", Keywords: []string{"stepfun"}, EnvKey: "STEPFUN_API_KEY",
		DefaultAPIBase: "https://api.stepfun.com/v1"},
	{Name: "xiaomi_mimo", Keywords: []string{"xiaomi_mimo", "mimo"}, EnvKey: "XIAOMIMIMO_API_KEY",
		DefaultAPIBase: "https://api.xiaomimimo.com/v1", ThinkingStyle: ThinkingType},
	{Name: "qianfan", Keywords: []string{"qianfan", "ernie"}, EnvKey: "QIANFAN_API_KEY",
		DefaultAPIBase: "https://qianfan.baidubce.com/v2"},
	{Name: "nvidia", Keywords: []string{"nvidia", "nvapi"}, EnvKey: "NVIDIA_NIM_API_KEY",
		DefaultAPIBase: "https://integrate.api.nvidia.com/v1", DetectByKeyPrefix: "nvapi-", DetectByBaseKeyword: "nvidia.com"},
	{Name: "groq", Keywords: []string{"groq"}, EnvKey: "GROQ_API_KEY",
		DefaultAPIBase: "https://api.groq.com/openai/v1"},
	{Name: "vllm", Keywords: []string{"vllm"}, EnvKey: "HOSTED_VLLM_API_KEY",
		DefaultAPIBase: "http://localhost:8000/v1", IsLocal: true},
	{Name: "ollama", Keywords: []string{"ollama"}, EnvKey: "OLLAMA_API_KEY",
		DefaultAPIBase: "http://localhost:11434/v1", DetectByBaseKeyword: "11434", IsLocal: true},
	{Name: "lm_studio", Keywords: []string{"lm-studio", "lmstudio", "lm_studio"}, EnvKey: "LM_STUDIO_API_KEY",
		DefaultAPIBase: "http://localhost:1234/v1", DetectByBaseKeyword: "1234", IsLocal: true},
}

// modelThinking gives model families their own switch whatever provider
// serves them (nanobot's _MODEL_THINKING_STYLES), e.g. Kimi through OpenRouter.
var modelThinking = map[string]ThinkingStyle{
	"kimi-k2.5": ThinkingType, "kimi-k2.6": ThinkingType,
	"mimo-v2.5-pro": ThinkingType, "mimo-v2.5": ThinkingType, "mimo-v2-pro": ThinkingType, "mimo-v2-omni": ThinkingType,
	"qwen3.5-plus": ThinkingEnable, "qwen3.5-flash": ThinkingEnable, "qwen3.6-plus": ThinkingEnable, "qwen3.6-flash": ThinkingEnable,
}

// kimiThinking are the Moonshot models that reject reasoning_effort next to
// their native thinking switch.
var kimiThinking = map[string]bool{"kimi-k2.5": true, "kimi-k2.6": true}

// Specs returns a copy of the registry in priority order.
func Specs() []Spec { return append([]Spec(nil), registry...) }

// LookupSpec finds a provider by config name, accepting camelCase and
// dashes ("lmStudio", "lm-studio" → lm_studio).
func LookupSpec(name string) (Spec, bool) {
	n := NormalizeName(name)
	for _, s := range registry {
		if s.Name == n {
			return s, true
		}
	}
	return Spec{}, false
}

// NormalizeName folds a provider name to the registry's snake_case form.
func NormalizeName(name string) string {
	var b strings.Builder
	var prev rune
	for i, r := range strings.TrimSpace(name) {
		if r == '-' || r == ' ' {
			r = '_'
		}
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	return b.String()
}

// dynamicSpec describes a providers.<name> entry the registry does not know:
// a user-named OpenAI-compatible server, like nanobot's create_dynamic_spec.
func dynamicSpec(name string) Spec { return Spec{Name: NormalizeName(name)} }
