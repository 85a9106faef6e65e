package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readKeys is every key this build acts on, with where. With the
// `unused:"why"` tags it must cover Keys() exactly: a key added to the
// types is either read somewhere (and listed here) or tagged, so a value
// the user sets is never silently dropped.
var readKeys = map[string]string{
	"agents.defaults.workspace":                       "WorkspacePath: sessions, prompt, tools",
	"retention.mediaDays":                             "Retention.Ages → diskgc",
	"retention.tempHours":                             "Retention.Ages → diskgc",
	"retention.sessionDays":                           "Retention.Ages → diskgc",
	"retention.temporalDays":                          "Retention.Ages → the embedded Temporal's namespace retention",
	"retention.intervalH":                             "Retention.Ages → workers/schedules.go",
	"gateway.instance":                                "Instance: task queues, workflow and schedule IDs",
	"agents.defaults.modelPreset":                     "ActiveModel",
	"agents.defaults.model":                           "ActiveModel → providers",
	"agents.defaults.provider":                        "ActiveModel → providers.Resolve",
	"agents.defaults.maxTokens":                       "TurnSettings",
	"agents.defaults.contextWindowTokens":             "TurnSettings",
	"agents.defaults.contextBlockLimit":               "TurnSettings → the model call's history budget",
	"agents.defaults.temperature":                     "ActiveModel → providers",
	"agents.defaults.fallbackModels":                  "Fallbacks → providers",
	"agents.defaults.maxToolIterations":               "TurnSettings",
	"agents.defaults.maxRepeatedToolCalls":            "TurnSettings",
	"agents.defaults.maxConcurrentSubagents":          "activities/subagent.go",
	"agents.defaults.failOnToolError":                 "TurnSettings → the subagent's runner",
	"agents.defaults.maxToolResultChars":              "activities, governance",
	"agents.defaults.providerRetryMode":               "TurnSettings: the model call's attempts",
	"agents.defaults.reasoningEffort":                 "providers",
	"agents.defaults.toolHintMaxLength":               "activities/llm.go",
	"agents.defaults.timezone":                        "TurnSettings → runtime context; the cron tool",
	"agents.defaults.timezoneMode":                    "resolveTimezone",
	"agents.defaults.botName":                         "prompt",
	"agents.defaults.unifiedSession":                  "channels",
	"agents.defaults.disabledSkills":                  "prompt, skills",
	"agents.defaults.idleCompactAfterMinutes":         "workers/schedules.go",
	"agents.defaults.idleCompactCheckIntervalSeconds": "workers/schedules.go",
	"agents.defaults.consolidationRatio":              "TurnSettings",
	"agents.defaults.dream.enabled":                   "workers/schedules.go",
	"agents.defaults.dream.intervalH":                 "workers/schedules.go",
	"agents.defaults.dream.cron":                      "workers/schedules.go",
	"agents.defaults.dream.modelOverride":             "activities/dream.go",
	"channels.sendProgress":                           "channels: edit streams, WeCom",
	"channels.sendToolHints":                          "channels",
	"channels.showReasoning":                          "the web chat",
	"channels.sendMaxRetries":                         "TurnSettings → delivery attempts",
	"providers.<name>.apiKey":                         "providers.Resolve",
	"providers.<name>.apiBase":                        "providers.Resolve",
	"providers.<name>.extraHeaders":                   "providers",
	"providers.<name>.extraBody":                      "providers",
	"providers.<name>.extraQuery":                     "providers",
	"providers.<name>.apiType":                        "providers.Resolve: chat completions or the Responses API",
	"providers.<name>.proxy":                          "providers",
	"providers.<name>.thinkingStyle":                  "providers",
	"providers.<name>.promptCaching":                  "providers: cache_control breakpoints on or off",
	"api.enabled":                                     "cmd/nanobot gateway",
	"api.host":                                        "channels/api",
	"api.port":                                        "channels/api",
	"api.timeout":                                     "channels/api",
	"api.apiKey":                                      "channels/api",
	"api.allowedHosts":                                "channels/api",
	"gateway.host":                                    "cmd/nanobot: metrics, health",
	"gateway.port":                                    "cmd/nanobot: health",
	"gateway.metricsPort":                             "cmd/nanobot: metrics",
	"gateway.heartbeat.enabled":                       "workers/schedules.go",
	"gateway.heartbeat.intervalS":                     "workers/schedules.go",
	"gateway.heartbeat.keepRecentMessages":            "activities/heartbeat.go",
	"tools.restrictToWorkspace":                       "tools",
	"gateway.restartMode":                             "cmd/nanobot/restart.go: /restart",
	"tools.my.enable":                                 "workers/tools.go: the my tool",
	"tools.my.allowSet":                               "workers/tools.go: my set",
	"tools.cliApps.enable":                            "workers/tools.go: run_cli_app",
	"tools.cliApps.installTimeout":                    "cmd/nanobot/cliapps_cmd.go: nanobot cli-apps install",
	"tools.cliApps.runTimeout":                        "workers/tools.go: run_cli_app",
	"tools.cliApps.catalogTtlSeconds":                 "workers/tools.go: run_cli_app",
	"tools.imageGeneration.enabled":                   "workers/tools.go: generate_image",
	"tools.imageGeneration.provider":                  "workers/tools.go: generate_image",
	"tools.imageGeneration.model":                     "workers/tools.go: generate_image",
	"tools.imageGeneration.defaultAspectRatio":        "workers/tools.go: generate_image",
	"tools.imageGeneration.defaultImageSize":          "workers/tools.go: generate_image",
	"tools.imageGeneration.maxImagesPerTurn":          "workers/tools.go: generate_image",
	"tools.imageGeneration.saveDir":                   "workers/tools.go: generate_image",
	"tools.maxSessionMessagesPerMinute":               "send_session_message's rate limit",
	"tools.ssrfWhitelist":                             "tools: the SSRF guard",
	"tools.exec.enable":                               "workers/tools.go",
	"tools.exec.timeout":                              "workers/tools.go",
	"tools.exec.pathPrepend":                          "workers/tools.go",
	"tools.exec.pathAppend":                           "workers/tools.go",
	"tools.exec.allowedEnvKeys":                       "workers/tools.go",
	"tools.exec.allowPatterns":                        "workers/tools.go",
	"tools.exec.denyPatterns":                         "workers/tools.go",
	"tools.exec.sandbox":                              "workers/sandbox.go",
	"tools.exec.sandboxRoBinds":                       "workers/sandbox.go",
	"tools.exec.sandboxRwBinds":                       "workers/sandbox.go",
	"tools.exec.sandboxNetwork":                       "workers/sandbox.go",
	"tools.exec.sessionIdleMinutes":                   "workers/tools.go → exec sessions' supervisors",
	"tools.exec.sandboxAllowDomains":                  "workers/sandbox.go → the sandbox's proxy",
	"tools.mcpServers.<name>.sandbox":                 "mcp: the pool wraps the command",
	"database.url":                                    "stores.Open",
	"transcription.enabled":                           "transcription.Describe / activities.Transcribe",
	"transcription.provider":                          "transcription.Resolve",
	"transcription.model":                             "transcription.Resolve",
	"transcription.language":                          "transcription.Resolve",
	"transcription.maxDurationSec":                    "activities.Transcribe",
	"transcription.maxUploadMb":                       "activities.Transcribe",
	"channels.transcriptionProvider":                  "transcription.Resolve (nanobot's older key)",
	"channels.transcriptionLanguage":                  "transcription.Resolve (nanobot's older key)",
	"tools.web.enable":                                "workers/tools.go",
	"tools.web.proxy":                                 "workers/tools.go → web tools",
	"tools.web.userAgent":                             "workers/tools.go → web tools",
	"tools.web.search.provider":                       "tools.ChooseSearch",
	"tools.web.search.apiKey":                         "tools.ChooseSearch",
	"tools.web.search.baseUrl":                        "tools.ChooseSearch (SearXNG)",
	"tools.web.search.maxResults":                     "workers/tools.go",
	"tools.web.search.timeout":                        "workers/tools.go",
	"tools.web.fetch.useJinaReader":                   "workers/tools.go → web_fetch",
	"tools.file.enable":                               "workers/tools.go",
	"tools.mcpServers.<name>.type":                    "mcp",
	"tools.mcpServers.<name>.command":                 "mcp",
	"tools.mcpServers.<name>.args":                    "mcp",
	"tools.mcpServers.<name>.env":                     "mcp",
	"tools.mcpServers.<name>.cwd":                     "mcp",
	"tools.mcpServers.<name>.url":                     "mcp",
	"tools.mcpServers.<name>.headers":                 "mcp",
	"tools.mcpServers.<name>.toolTimeout":             "mcp",
	"tools.mcpServers.<name>.enabledTools":            "mcp",
	"tools.mcpServers.<name>.auth":                    "mcp (oauth: nanobot mcp login)",
	"tools.approval.mode":                             "tools: approval policy",
	"tools.approval.tools":                            "tools: approval policy",
	"tools.approval.commands":                         "tools: approval policy",
	"tools.approval.timeoutS":                         "TurnSettings",
	"modelPresets.<name>.model":                       "ActiveModel, Fallbacks",
	"modelPresets.<name>.provider":                    "ActiveModel, Fallbacks",
	"modelPresets.<name>.maxTokens":                   "ActiveModel, Fallbacks",
	"modelPresets.<name>.contextWindowTokens":         "ActiveModel, Fallbacks",
	"modelPresets.<name>.temperature":                 "ActiveModel, Fallbacks",
	"modelPresets.<name>.reasoningEffort":             "ActiveModel, Fallbacks",
}

// TestEveryKeyIsReadOrWarnedAbout derives the keys from the config types:
// each is either in readKeys (and its Go field is read outside the type
// definitions) or tagged unused, never both, never neither.
func TestEveryKeyIsReadOrWarnedAbout(t *testing.T) {
	sources := goSourcesOutsideTypes(t)
	seen := map[string]bool{}
	for _, k := range Keys() {
		seen[k.Path] = true
		where, read := readKeys[k.Path]
		switch {
		case read && k.Unused != "":
			t.Errorf("%s is tagged unused (%q) and listed as read (%s): pick one", k.Path, k.Unused, where)
		case !read && k.Unused == "":
			t.Errorf("%s is neither read (readKeys) nor tagged `unused:\"why\"`: a user who sets it would not be told it does nothing", k.Path)
		case read && !regexp.MustCompile(`\.`+k.Field.Name+`\b`).MatchString(sources):
			t.Errorf("%s is listed as read (%s) but no code reads its field %s", k.Path, where, k.Field.Name)
		}
	}
	var stale []string
	for p := range readKeys {
		if !seen[p] {
			stale = append(stale, p)
		}
	}
	sort.Strings(stale)
	require.Empty(t, stale, "readKeys names keys the config no longer has")
}

// goSourcesOutsideTypes is the module's non-test Go code, without the
// files that only declare the config types and their defaults.
func goSourcesOutsideTypes(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != "..") {
			return filepath.SkipDir
		}
		name := filepath.ToSlash(p)
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") ||
			strings.HasPrefix(name, "../config/types") || name == "../config/defaults.go" || name == "../config/keys.go" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b.Write(data)
		return nil
	})
	require.NoError(t, err)
	return b.String()
}
