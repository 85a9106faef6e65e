package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/nanobot-durable/nanobot/protocol"
)

// keyArgs are the arguments that say most about a call, best first.
var keyArgs = []string{"path", "file_path", "command", "url", "query", "pattern", "task", "content", "name", "session_id"}

// KeyArg picks the argument that says most about a call: a known key when
// present, else the first string argument by name.
func KeyArg(argsJSON string) (key, value string) {
	var args map[string]any
	if json.Unmarshal([]byte(argsJSON), &args) != nil {
		return "", ""
	}
	for _, k := range keyArgs {
		if v, ok := args[k].(string); ok && strings.TrimSpace(v) != "" {
			return k, v
		}
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if v, ok := args[k].(string); ok && strings.TrimSpace(v) != "" {
			return k, v
		}
	}
	return "", ""
}

// Hint is nanobot's tool hint: the tool's name and its key argument on one
// line, cut to max runes ("read_file README.md"). The message tool has none:
// the message it sends is the progress.
func Hint(name, argsJSON string, max int) string {
	if name == "message" {
		return ""
	}
	_, v := KeyArg(argsJSON)
	v = strings.Join(strings.Fields(v), " ")
	if v == "" {
		return name
	}
	if max > 0 && len([]rune(v)) > max {
		v = string([]rune(v)[:max]) + "…"
	}
	return fmt.Sprintf("%s %s", name, v)
}

// MessageAnswersOrigin tells whether a message tool call with these
// arguments targets the turn's own chat (then the final reply is not sent again).
func MessageAnswersOrigin(origin protocol.Route, argsJSON string) bool {
	var args map[string]any
	if json.Unmarshal([]byte(argsJSON), &args) != nil {
		return false
	}
	to := messageTarget(origin, strings.TrimSpace(StringArg(args, "channel")), strings.TrimSpace(StringArg(args, "chat_id")))
	return to.SameChat(origin)
}
