package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Self is the agent as the my tool sees it; the durable layer implements
// it from the config, the session and Temporal. Nothing it returns holds
// a secret.
type Self interface {
	// Facts are what check shows, top-level keys in the order given.
	Facts(ctx context.Context, env Env) (keys []string, facts map[string]any, err error)
	// SetMaxIterations writes agents.defaults.maxToolIterations to the config file.
	SetMaxIterations(ctx context.Context, n int) (old int, err error)
	// SetModelPreset switches this session's preset (as /model does).
	SetModelPreset(ctx context.Context, env Env, name string) (model string, contextWindow int, err error)
	// SetScratch keeps a note in this session's scratchpad (at most
	// ScratchpadKeys of them: ErrScratchpadFull).
	SetScratch(ctx context.Context, env Env, key string, value any) error
}

const myDescription = "Check and set your own runtime state.\n" +
	"Actions: check, set.\n" +
	"- check (no key): full config overview — start here.\n" +
	"- check (key): drill into a value. Dot-paths allowed " +
	"(e.g. '_last_usage.prompt_tokens', 'web_config.enable').\n" +
	"- set (key, value): change config or store notes in your scratchpad. " +
	"Scratchpad keys persist across turns of this session.\n" +
	"Current routing metadata is available read-only via request.channel, " +
	"request.chat_id, and request.sender_id.\n" +
	"Use model_preset for session-scoped model or context changes; direct " +
	"model/context_window_tokens writes are disabled during active sessions.\n" +
	"Note: web_config and exec_config are readable but read-only.\n" +
	"\n" +
	"When to use:\n" +
	"- User asks about your model, settings, or token usage → check that key.\n" +
	"- User asks to switch to a named model preset → set model_preset to that preset name.\n" +
	"- A tool fails or behaves unexpectedly → check the related config to diagnose.\n" +
	"- User asks you to remember a preference for this session → set to store it in your scratchpad.\n" +
	"- About to start a large task → check context_window_tokens and max_iterations first."

const myReadOnlyNote = "\nREAD-ONLY MODE: set is disabled."

const mySetNote = "\nIMPORTANT: Before setting state, predict the potential impact. " +
	"If the operation could cause crashes or instability " +
	"(e.g. changing model), warn the user first."

const myParameters = `{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["check", "set"], "description": "Action to perform"},
    "key": {"type": "string", "description": "Dot-path for check/set. Examples: 'max_iterations', 'workspace', 'provider_retry_mode'. Use 'request.channel', 'request.chat_id', or 'request.sender_id' for current routing metadata. Use 'model_preset' to switch named model presets. For check without key, shows all config values."},
    "value": {"description": "New value (for set). Type must match target (int for max_iterations/context_window_tokens, str for model/model_preset)."}
  },
  "required": ["action"]
}`

// What set may not touch (nanobot's lists, in this build's names).
var (
	myReadOnly  = []string{"subagents", "_current_iteration", "exec_config", "web_config", "request", "workspace_sandbox", "tools", "channels", "schedules", "provider", "workspace", "_last_usage"}
	myProtected = []string{"restrict_to_workspace", "channels_config", "providers", "mcp_servers", "sessions", "bus", "runner"}
	mySensitive = []string{"api_key", "apikey", "secret", "password", "token", "credential", "private_key", "access_token", "refresh_token", "auth"}
)

// ScratchpadKeys bounds a session's scratchpad (nanobot's 64).
const ScratchpadKeys = 64

// ErrScratchpadFull is the refusal of a new key in a full scratchpad.
var ErrScratchpadFull = fmt.Errorf("scratchpad is full (max %d keys). Remove unused keys first.", ScratchpadKeys)

// MyTool is my: the agent's look at itself, and the few changes nanobot allows.
type MyTool struct {
	self     Self
	allowSet bool
}

// NewMyTool builds my; allowSet is tools.my.allowSet.
func NewMyTool(self Self, allowSet bool) MyTool { return MyTool{self: self, allowSet: allowSet} }

func (MyTool) Name() string { return "my" }
func (t MyTool) Description() string {
	if !t.allowSet {
		return myDescription + myReadOnlyNote
	}
	return myDescription + mySetNote
}
func (MyTool) Parameters() json.RawMessage { return json.RawMessage(myParameters) }

// Flags: set writes the config file or the session, so it is claimed; check reads.
func (t MyTool) Flags() Flags { return Flags{SideEffects: t.allowSet} }

func (t MyTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	key := strings.TrimSpace(StringArg(args, "key"))
	switch action := StringArg(args, "action"); action {
	case "check", "inspect":
		return t.check(ctx, env, key)
	case "set", "modify":
		if !t.allowSet {
			return ErrorResult("Error: set is disabled (tools.my.allowSet is false)")
		}
		return t.set(ctx, env, key, args["value"])
	default:
		return TextResult("Unknown action: " + action)
	}
}

func sensitive(part string) bool {
	lower := strings.ToLower(part)
	if slices.Contains(mySensitive, lower) {
		return true
	}
	for _, p := range strings.Split(lower, "_") {
		if slices.Contains(mySensitive, p) {
			return true
		}
	}
	return false
}

func (t MyTool) check(ctx context.Context, env Env, key string) Result {
	order, facts, err := t.self.Facts(ctx, env)
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	if key == "" {
		lines := make([]string, 0, len(order))
		for _, k := range order {
			lines = append(lines, formatValue(facts[k], k))
		}
		return TextResult(strings.Join(lines, "\n"))
	}
	var cur any = facts
	for _, part := range strings.Split(key, ".") {
		if strings.HasPrefix(part, "__") || sensitive(part) || slices.Contains(myProtected, part) {
			return ErrorResult("Error: '%s' is not accessible", part)
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return ErrorResult("Error: '%s' not found", key)
		}
		if cur, ok = m[part]; !ok {
			if key == "scratchpad" {
				return TextResult("scratchpad is empty")
			}
			return ErrorResult("Error: '%s' not found", key)
		}
	}
	return TextResult(formatValue(cur, key))
}

func (t MyTool) set(ctx context.Context, env Env, key string, value any) Result {
	if key == "" {
		return ErrorResult("Error: 'key' cannot be empty or whitespace")
	}
	top, _, nested := strings.Cut(key, ".")
	switch {
	case strings.HasPrefix(top, "__") || slices.Contains(myProtected, top) || sensitive(top):
		return ErrorResult("Error: '%s' is protected and cannot be modified", key)
	case slices.Contains(myReadOnly, top):
		return ErrorResult("Error: '%s' is read-only and cannot be modified", key)
	case nested && top != "scratchpad":
		return ErrorResult("Error: '%s' cannot be modified: only max_iterations, model_preset and scratchpad keys can", key)
	}
	switch key {
	case "max_iterations":
		n, ok := intValue(value)
		switch {
		case !ok:
			return ErrorResult("Error: 'max_iterations' must be int, got %s", pyType(value))
		case n < 1:
			return ErrorResult("Error: 'max_iterations' must be >= 1")
		case n > 100:
			return ErrorResult("Error: 'max_iterations' must be <= 100")
		}
		old, err := t.self.SetMaxIterations(ctx, n)
		if err != nil {
			return ErrorResult("Error: %v", err)
		}
		return TextResult(fmt.Sprintf("Set max_iterations = %d (was %d); the config file is changed, and turns from the next one on use it", n, old))
	case "model", "context_window_tokens":
		return ErrorResult("Error: direct '%s' changes are instance-wide and disabled during an active session; use a configured model_preset", key)
	case "model_preset":
		name, _ := value.(string)
		if strings.TrimSpace(name) == "" {
			return ErrorResult("Error: 'model_preset' must be a non-empty string")
		}
		model, window, err := t.self.SetModelPreset(ctx, env, strings.TrimSpace(name))
		if err != nil {
			return ErrorResult("Error: %v", err)
		}
		return TextResult(fmt.Sprintf("Set model_preset = %s for the next turn; model will be %s; context_window_tokens will be %d",
			pyRepr(strings.TrimSpace(name)), pyRepr(model), window))
	}
	name := strings.TrimPrefix(key, "scratchpad.")
	if strings.Contains(name, ".") {
		return ErrorResult("Error: scratchpad keys are flat: '%s'", name)
	}
	if err := jsonSafe(value, 0); err != "" {
		return ErrorResult("Error: %s", err)
	}
	if err := t.self.SetScratch(ctx, env, name, value); err != nil {
		return ErrorResult("Error: %v", err)
	}
	return TextResult(fmt.Sprintf("Set scratchpad.%s = %s", name, pyRepr(value)))
}

func intValue(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), n == float64(int(n))
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	case int:
		return n, true
	case int64:
		return clampInt64(n), true
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(n))
		return i, err == nil
	}
	return 0, false
}

func jsonSafe(v any, depth int) string {
	if depth > 10 {
		return "value nesting too deep (max 10 levels)"
	}
	switch x := v.(type) {
	case nil, string, bool, float64, json.Number, int, int64:
		return ""
	case []any:
		for i, item := range x {
			if err := jsonSafe(item, depth+1); err != "" {
				return fmt.Sprintf("list[%d] contains %s", i, err)
			}
		}
		return ""
	case map[string]any:
		for k, item := range x {
			if err := jsonSafe(item, depth+1); err != "" {
				return fmt.Sprintf("dict key '%s' contains %s", k, err)
			}
		}
		return ""
	}
	return fmt.Sprintf("unsupported type %T", v)
}

// formatValue shows a value as nanobot's my does: scalars as they are,
// small maps and lists whole, big maps by their keys, long lists by count.
func formatValue(v any, key string) string {
	prefix := ""
	if key != "" {
		prefix = key + ": "
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) == 0 {
			return prefix + "{}"
		}
		if r := pyRepr(x); len(keys) <= 5 && len(r) <= 200 {
			return prefix + r
		}
		more := ""
		if len(keys) > 15 {
			keys, more = keys[:15], ", ..."
		}
		return prefix + "{" + strings.Join(keys, ", ") + more + "}"
	case []any:
		if len(x) > 20 {
			return fmt.Sprintf("%s[%d items]", prefix, len(x))
		}
	case []string:
		if len(x) > 20 {
			return fmt.Sprintf("%s[%d items]", prefix, len(x))
		}
	}
	return prefix + pyRepr(v)
}

// pyRepr writes v as Python's repr would (nanobot's texts are Python's).
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(x) + "'"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return x.String()
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = pyRepr(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = pyRepr(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyRepr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

func pyType(v any) string {
	switch v.(type) {
	case string:
		return "str"
	case bool:
		return "bool"
	case nil:
		return "NoneType"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	case float64:
		return "float"
	case int, int64:
		return "int"
	}
	return fmt.Sprintf("%T", v)
}
