package config

// providerNames are nanobot's provider slots; Default lists them all so an
// onboarded config shows every provider the user can fill in.
var providerNames = []string{
	"custom", "azure_openai", "bedrock", "anthropic", "openai", "openrouter", "orcarouter",
	"assemblyai", "huggingface", "skywork", "deepseek", "groq", "zhipu", "dashscope",
	"modelscope", "vllm", "ollama", "lm_studio", "atomic_chat", "ovms", "gemini", "moonshot",
	"kimi_coding", "minimax", "minimax_anthropic", "mistral", "stepfun", "xiaomi_mimo",
	"longcat", "ant_ling", "aihubmix", "siliconflow", "edenai", "novita", "volcengine",
	"volcengine_coding_plan", "byteplus", "byteplus_coding_plan", "qianfan", "nvidia",
	"opencode", "opencode_zen", "opencode_go", "openai_codex", "xai_grok", "github_copilot",
}

// Default returns nanobot's defaults, except tools.restrictToWorkspace which
// this project turns on.
func Default() *Config {
	providers := make(map[string]ProviderConfig, len(providerNames))
	for _, name := range providerNames {
		providers[name] = ProviderConfig{}
	}
	return &Config{
		Agents:        Agents{Defaults: defaultDefaults()},
		Channels:      defaultChannels(),
		Transcription: Transcription{Enabled: true, MaxDurationSec: 120, MaxUploadMB: 25},
		Providers:     providers,
		API: API{
			Host:    "127.0.0.1",
			Port:    8900,
			Timeout: 120,
		},
		Gateway: Gateway{
			Host:        "127.0.0.1",
			Port:        18790,
			Heartbeat:   Heartbeat{Enabled: true, IntervalS: 1800, KeepRecentMessages: 8},
			RestartMode: "auto",
		},
		Tools:        defaultTools(),
		ModelPresets: map[string]ModelPreset{},
	}
}

func defaultDefaults() Defaults {
	return Defaults{
		Workspace:                       "~/.nanobot/workspace",
		Model:                           "anthropic/claude-opus-4-5",
		Provider:                        "auto",
		MaxTokens:                       8192,
		ContextWindowTokens:             200000,
		Temperature:                     0.1,
		FallbackModels:                  []FallbackModel{},
		MaxToolIterations:               200,
		MaxRepeatedToolCalls:            3,
		MaxConcurrentSubagents:          1,
		FailOnToolError:                 true,
		MaxToolResultChars:              16000,
		ProviderRetryMode:               "standard",
		ToolHintMaxLength:               40,
		Timezone:                        "UTC",
		TimezoneMode:                    "auto",
		BotName:                         "nanobot",
		BotIcon:                         "🐈",
		DisabledSkills:                  []string{},
		IdleCompactAfterMinutes:         15,
		IdleCompactCheckIntervalSeconds: 60,
		ConsolidationRatio:              0.5,
		Dream:                           Dream{Enabled: true, IntervalH: 2},
	}
}

func defaultChannels() Channels {
	return Channels{
		SendProgress:          true,
		SendToolHints:         true,
		ShowReasoning:         true,
		SendMaxRetries:        3,
		ExtractDocumentText:   true,
		TranscriptionProvider: "groq",
	}
}

func defaultTools() Tools {
	restrict, network := true, true
	return Tools{
		RestrictToWorkspace: &restrict,
		SSRFWhitelist:       []string{},
		Exec: ExecTool{
			Enable:              true,
			Timeout:             60,
			Sandbox:             SandboxAuto,
			SandboxRoBinds:      []string{},
			SandboxRwBinds:      []string{},
			SandboxNetwork:      &network,
			SandboxAllowDomains: []string{},
			AllowedEnvKeys:      []string{},
			AllowPatterns:       []string{},
			DenyPatterns:        []string{},
			SessionIdleMinutes:  30,
		},
		Web: WebTools{
			Enable: true,
			Search: WebSearch{Provider: "duckduckgo", MaxResults: 5, Timeout: 30},
			Fetch:  WebFetch{UseJinaReader: true},
		},
		File:                         FileTools{Enable: true},
		MCPServers:                   map[string]MCPServer{},
		Approval:                     Approval{Mode: "off", Tools: []string{}, Commands: []string{}, TimeoutS: 86400},
		CLIApps:                      defaultCLIApps(),
		My:                           MyTool{Enable: true},
		ImageGeneration:              defaultImageGeneration(),
		MaxSessionMessagesPerMinute:  6,
		WebUIAllowLocalServiceAccess: true,
	}
}

// defaulter is implemented by types that appear as new map or list entries,
// so an entry the file only partly spells out still gets nanobot's defaults.
type defaulter interface{ setDefaults() }

func (p *ModelPreset) setDefaults() {
	*p = ModelPreset{Provider: "auto", MaxTokens: 8192, ContextWindowTokens: 200000, Temperature: 0.1}
}

func (s *MCPServer) setDefaults() {
	*s = MCPServer{ToolTimeout: 30, EnabledTools: []string{"*"}}
}

func (f *fallbackObject) setDefaults() {
	*f = fallbackObject{Provider: "auto"}
}
