// Package config reads nanobot's config.json unchanged (camelCase or
// snake_case keys), applies NANOBOT_* environment overrides, and writes a
// default file for `nanobot onboard`.
package config

import "encoding/json"

// Struct tags: `json` gives the camelCase key written by Save; `config` holds
// decoder options: "alias=name" (an extra accepted key), "snakekeys" (map keys
// are canonicalised to snake_case, as nanobot's provider names are) and "rest"
// (a map[string]json.RawMessage that keeps every key the struct doesn't know).

// Config is the whole of config.json.
type Config struct {
	Agents        Agents                    `json:"agents"`
	Channels      Channels                  `json:"channels"`
	Transcription Transcription             `json:"transcription"`
	Providers     map[string]ProviderConfig `json:"providers" config:"snakekeys"`
	API           API                       `json:"api"`
	Gateway       Gateway                   `json:"gateway"`
	Tools         Tools                     `json:"tools"`
	ModelPresets  map[string]ModelPreset    `json:"modelPresets"`
	// Database is this project's key: state in PostgreSQL instead of the home's files.
	Database Database `json:"database,omitzero"`
	// Retention is this project's key: how long media, caches, sessions and
	// Temporal's histories are kept (see retention.go).
	Retention Retention `json:"retention,omitzero"`

	// Path is the file Load read (or looked for); Exists says whether it was there.
	Path   string `json:"-"`
	Exists bool   `json:"-"`
}

// Agents is the `agents` block; nanobot only has `defaults`.
type Agents struct {
	Defaults Defaults `json:"defaults"`
}

// Defaults is agents.defaults: the model and the agent loop's limits.
type Defaults struct {
	Workspace           string          `json:"workspace"`
	ModelPreset         string          `json:"modelPreset"` // "" = none; otherwise wins over model/provider/…
	Model               string          `json:"model"`
	Provider            string          `json:"provider"`
	MaxTokens           int             `json:"maxTokens"`
	ContextWindowTokens int             `json:"contextWindowTokens"`
	ContextBlockLimit   *int            `json:"contextBlockLimit"`
	Temperature         float64         `json:"temperature"`
	FallbackModels      []FallbackModel `json:"fallbackModels"`
	MaxToolIterations   int             `json:"maxToolIterations"`
	// MaxRepeatedToolCalls: the same call with the same arguments runs at most this often in a turn.
	MaxRepeatedToolCalls            int      `json:"maxRepeatedToolCalls"`
	MaxConcurrentSubagents          int      `json:"maxConcurrentSubagents"`
	FailOnToolError                 bool     `json:"failOnToolError"`
	MaxToolResultChars              int      `json:"maxToolResultChars"`
	ProviderRetryMode               string   `json:"providerRetryMode"`
	ReasoningEffort                 *string  `json:"reasoningEffort"`
	ToolHintMaxLength               int      `json:"toolHintMaxLength"`
	Timezone                        string   `json:"timezone"`
	TimezoneMode                    string   `json:"timezoneMode"`
	BotName                         string   `json:"botName"`
	BotIcon                         string   `json:"botIcon" unused:"the CLI shows no bot icon"`
	UnifiedSession                  bool     `json:"unifiedSession"`
	DisabledSkills                  []string `json:"disabledSkills"`
	IdleCompactAfterMinutes         int      `json:"idleCompactAfterMinutes" config:"alias=sessionTtlMinutes"`
	IdleCompactCheckIntervalSeconds int      `json:"idleCompactCheckIntervalSeconds"`
	ConsolidationRatio              float64  `json:"consolidationRatio"`
	Dream                           Dream    `json:"dream"`
}

// Dream is the periodic memory-consolidation job.
type Dream struct {
	Enabled       bool   `json:"enabled"`
	IntervalH     int    `json:"intervalH"`
	Cron          string `json:"cron"`          // "" = use intervalH
	ModelOverride string `json:"modelOverride"` // "" = the agent's model
}

// FallbackModel is one entry of fallbackModels: either a preset name
// (Preset set, other fields zero) or an inline model description.
type FallbackModel struct {
	Preset              string   `json:"-"`
	Model               string   `json:"model"`
	Provider            string   `json:"provider"`
	MaxTokens           *int     `json:"maxTokens,omitempty"`
	ContextWindowTokens *int     `json:"contextWindowTokens,omitempty"`
	Temperature         *float64 `json:"temperature,omitempty"`
	ReasoningEffort     *string  `json:"reasoningEffort,omitempty"`
}

// ModelPreset is a named model setup under modelPresets.
type ModelPreset struct {
	Model               string  `json:"model"`
	Provider            string  `json:"provider"`
	MaxTokens           int     `json:"maxTokens"`
	ContextWindowTokens int     `json:"contextWindowTokens"`
	Temperature         float64 `json:"temperature"`
	ReasoningEffort     *string `json:"reasoningEffort"`
}

// ProviderConfig is providers.NAME: credentials and request tweaks.
type ProviderConfig struct {
	APIKey        string            `json:"apiKey"`
	APIBase       string            `json:"apiBase"`
	APIType       string            `json:"apiType"` // "" or "auto", "chat_completions", "responses"
	ExtraHeaders  map[string]string `json:"extraHeaders"`
	ExtraBody     map[string]any    `json:"extraBody"` // numbers decode as float64, like encoding/json
	ExtraQuery    map[string]string `json:"extraQuery"`
	Proxy         string            `json:"proxy"`
	ThinkingStyle string            `json:"thinkingStyle"`
	// PromptCaching false sends no cache_control breakpoints (for a proxy that
	// rejects them, or to measure what caching saves); nil keeps the provider's default.
	PromptCaching *bool  `json:"promptCaching,omitempty"`
	DisplayName   string `json:"displayName,omitempty" unused:"providers are named by their key"`
	// Region and Profile are Bedrock's (AWS); this build does not speak Bedrock.
	Region  string `json:"region,omitempty" unused:"there is no Bedrock provider in this build"`
	Profile string `json:"profile,omitempty" unused:"there is no Bedrock provider in this build"`
}

// Channels holds the options shared by all chat channels; each channel's
// own block stays raw in Other, read by the channel package that owns its type.
type Channels struct {
	SendProgress   bool `json:"sendProgress"`
	SendToolHints  bool `json:"sendToolHints"`
	ShowReasoning  bool `json:"showReasoning"`
	SendMaxRetries int  `json:"sendMaxRetries"`
	// ExtractDocumentText is deprecated in nanobot, ignored there too.
	ExtractDocumentText bool `json:"extractDocumentText" unused:"deprecated in nanobot: documents are read on demand"`
	// TranscriptionProvider and TranscriptionLanguage are nanobot's older place for
	// transcription.provider and .language, read when those are empty.
	TranscriptionProvider string `json:"transcriptionProvider"`
	TranscriptionLanguage string `json:"transcriptionLanguage"`

	// Other keeps every channel block verbatim, keyed as written.
	Other map[string]json.RawMessage `json:"-" config:"rest"`
}

// API is the OpenAI-compatible HTTP server of `nanobot serve`.
type API struct {
	// Enabled also serves the API from the gateway (`nanobot serve` always does).
	Enabled bool    `json:"enabled"`
	Host    string  `json:"host"`
	Port    int     `json:"port"`
	Timeout float64 `json:"timeout"` // seconds
	// APIKey, when set, is required as a bearer key; a host beyond loopback requires one.
	APIKey string `json:"apiKey"`
	// AllowedHosts are Host names the API answers to beside 127.0.0.1, localhost, [::1]
	// and the bound IP; others get 421 (not in nanobot).
	AllowedHosts []string `json:"allowedHosts"`
}

// Gateway is the long-running gateway process.
type Gateway struct {
	Host string `json:"host"`
	// Port serves /health and /ready on Host (see cmd/nanobot/health.go); 0 or less = off.
	Port int `json:"port"`
	// MetricsPort serves Prometheus metrics on Host (127.0.0.1 when Host is empty) at /metrics; 0 = off.
	MetricsPort int       `json:"metricsPort"`
	Heartbeat   Heartbeat `json:"heartbeat"`
	RestartMode string    `json:"restartMode"` // /restart: "auto" or "exec" re-executes the binary, "spawn" starts it anew and exits
	// Instance keeps several nanobots apart on one Temporal namespace: it
	// prefixes their task queues, workflow IDs and schedule IDs ("" = default).
	Instance string `json:"instance"`
}

// Heartbeat is the gateway's periodic wake-up.
type Heartbeat struct {
	Enabled            bool `json:"enabled"`
	IntervalS          int  `json:"intervalS"`
	KeepRecentMessages int  `json:"keepRecentMessages"`
}

// Tools configures the built-in tools and MCP servers.
type Tools struct {
	RestrictToWorkspace         *bool                `json:"restrictToWorkspace"` // nil = true in this project
	SSRFWhitelist               []string             `json:"ssrfWhitelist"`       // CIDRs
	Exec                        ExecTool             `json:"exec"`
	Web                         WebTools             `json:"web"`
	File                        FileTools            `json:"file"`
	MCPServers                  map[string]MCPServer `json:"mcpServers"`
	Approval                    Approval             `json:"approval"`
	My                          MyTool               `json:"my"`
	MaxSessionMessagesPerMinute int                  `json:"maxSessionMessagesPerMinute"` // send_session_message's limit per session
	ImageGeneration             ImageGenerationTool  `json:"imageGeneration"`
	// nanobot's tools this build does not have.
	CLIApps                        CLIAppsTool `json:"cliApps"`
	WebUIAllowLocalServiceAccess   bool        `json:"webuiAllowLocalServiceAccess" config:"alias=allowLocalPreviewAccess" unused:"nanobot's WebUI is not in this build"`
	WebUIAllowRemotePackageInstall bool        `json:"webuiAllowRemotePackageInstall" unused:"nanobot's WebUI is not in this build"`
}

// ImageGenerationTool is tools.imageGeneration: generate_image (off by
// default) and the provider whose providers.<name> block it uses.
type ImageGenerationTool struct {
	Enabled            bool   `json:"enabled"`
	Provider           string `json:"provider"`
	Model              string `json:"model"`
	DefaultAspectRatio string `json:"defaultAspectRatio"`
	DefaultImageSize   string `json:"defaultImageSize"`
	MaxImagesPerTurn   int    `json:"maxImagesPerTurn"` // 1..8
	SaveDir            string `json:"saveDir"`          // relative to the workspace
}

func defaultImageGeneration() ImageGenerationTool {
	return ImageGenerationTool{Provider: "openrouter", Model: "openai/gpt-5.4-image-2", DefaultAspectRatio: "1:1",
		DefaultImageSize: "1K", MaxImagesPerTurn: 4, SaveDir: "generated"}
}

// CLIAppsTool is tools.cliApps: run_cli_app (on by default, as in nanobot)
// over the apps the owner installed with `nanobot cli-apps install`.
type CLIAppsTool struct {
	Enable            bool `json:"enable"`
	InstallTimeout    int  `json:"installTimeout"`    // seconds, 1..3600
	RunTimeout        int  `json:"runTimeout"`        // seconds, 1..600
	CatalogTTLSeconds int  `json:"catalogTtlSeconds"` // 60..86400
}

func defaultCLIApps() CLIAppsTool {
	return CLIAppsTool{Enable: true, InstallTimeout: 300, RunTimeout: 60, CatalogTTLSeconds: 3600}
}

// MyTool is tools.my: the agent's look at itself (check), and changing
// the few settings nanobot lets it change (set, off by default).
type MyTool struct {
	Enable   bool `json:"enable"`
	AllowSet bool `json:"allowSet"`
}

// SessionMessagesPerMinute is tools.maxSessionMessagesPerMinute (validated ≥ 1).
func (t Tools) SessionMessagesPerMinute() int { return max(1, t.MaxSessionMessagesPerMinute) }

// Approval is tools.approval: which calls wait for a person's yes.
type Approval struct {
	// Mode: "off" (default), "risky" (the patterns below, deny-list hits,
	// writes outside the workspace), "all" (every call that changes something).
	Mode string `json:"mode"`
	// Tools are tool-name globs that always ask ("exec", "mcp_github_*").
	Tools []string `json:"tools"`
	// Commands are exec command regexes that ask; empty takes the built-in risky list.
	Commands []string `json:"commands"`
	// TimeoutS is how long a request waits before the call is skipped (default a day).
	TimeoutS int `json:"timeoutS"`
}

// ExecTool is tools.exec.
type ExecTool struct {
	Enable         bool     `json:"enable"`
	Timeout        int      `json:"timeout"` // seconds, 0 = none
	PathPrepend    string   `json:"pathPrepend"`
	PathAppend     string   `json:"pathAppend"`
	Sandbox        string   `json:"sandbox"` // "auto" (also "") | "bwrap" | "none"; see SandboxMode
	SandboxRoBinds []string `json:"sandboxRoBinds"`
	SandboxRwBinds []string `json:"sandboxRwBinds"`
	// SandboxNetwork gives the sandbox outbound traffic through the worker's proxy; false: none (not in nanobot). nil = true.
	SandboxNetwork *bool `json:"sandboxNetwork"`
	// SandboxAllowDomains, when set, are the only hosts the sandbox's proxy reaches, each with its subdomains (not in nanobot).
	SandboxAllowDomains []string `json:"sandboxAllowDomains"`
	AllowedEnvKeys      []string `json:"allowedEnvKeys"`
	AllowPatterns       []string `json:"allowPatterns"`
	DenyPatterns        []string `json:"denyPatterns"`
	// SessionIdleMinutes ends an exec session no call touched for that long (not in nanobot, whose idle end is a fixed 30).
	SessionIdleMinutes int `json:"sessionIdleMinutes"`
}

// WebTools is tools.web.
type WebTools struct {
	Enable    bool      `json:"enable"`
	Proxy     string    `json:"proxy"`
	UserAgent string    `json:"userAgent"`
	Search    WebSearch `json:"search"`
	Fetch     WebFetch  `json:"fetch"`
}

// WebSearch is tools.web.search.
type WebSearch struct {
	Provider   string `json:"provider"`
	APIKey     string `json:"apiKey"`
	BaseURL    string `json:"baseUrl"`
	MaxResults int    `json:"maxResults"`
	Timeout    int    `json:"timeout"` // seconds
}

// WebFetch is tools.web.fetch.
type WebFetch struct {
	UseJinaReader bool `json:"useJinaReader"`
}

// FileTools is tools.file.
type FileTools struct {
	Enable bool `json:"enable"`
}

// MCPServer is tools.mcpServers.NAME.
type MCPServer struct {
	Type         string            `json:"type"` // "" (auto) | "stdio" | "sse" | "streamableHttp"
	Command      string            `json:"command"`
	Args         []string          `json:"args"`
	Env          map[string]string `json:"env"`
	Cwd          string            `json:"cwd"`
	URL          string            `json:"url"`
	Headers      map[string]string `json:"headers"`
	ToolTimeout  int               `json:"toolTimeout"` // seconds
	EnabledTools []string          `json:"enabledTools"`
	Auth         string            `json:"auth"` // "" | "oauth"
	// Sandbox runs a stdio server inside the exec sandbox's bwrap layout (not in nanobot).
	Sandbox bool `json:"sandbox"`
}
