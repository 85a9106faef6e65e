package tools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// denyRule is one dangerous-command regex and the name the model is shown.
type denyRule struct {
	re    *regexp.Regexp
	label string
}

// memoryFiles are the memory bookkeeping files only the agent itself may
// write (nanobot's Dream/consolidation state).
const memoryFiles = `(?:history\.jsonl|\.dream_cursor)`

// defaultDenyRules are nanobot's exec deny patterns, matched against the
// lower-cased command. The rm rule is wider than nanobot's `rm\s+-[rf]{1,2}`
// so that flag order, split flags (-v -r) and long options do not slip by.
var defaultDenyRules = []denyRule{
	{regexp.MustCompile(`\brm\b[^;&|\n]*\s-(?:[a-z]*[rf][a-z]*|-recursive|-force)\b`), "recursive or forced rm"},
	{regexp.MustCompile(`\bdel\s+/[fq]\b`), "del /f"},
	{regexp.MustCompile(`\brmdir\s+/s\b`), "rmdir /s"},
	{regexp.MustCompile(`(?:^|[;&|(\n]\s*|\bsudo\s+)format\b`), "format"},
	{regexp.MustCompile(`\b(?:mkfs|diskpart)\b`), "mkfs/diskpart"},
	{regexp.MustCompile(`\bdd\b[^;&|\n]*\bif=`), "dd if="},
	{regexp.MustCompile(`>\s*/dev/sd`), "write to a raw disk"},
	{regexp.MustCompile(`\b(?:shutdown|reboot|poweroff)\b`), "shutdown/reboot/poweroff"},
	{regexp.MustCompile(`:\(\)\s*\{.*\};\s*:`), "fork bomb"},
	{regexp.MustCompile(`>>?\s*\S*` + memoryFiles), "write to memory bookkeeping files"},
	{regexp.MustCompile(`\btee\b[^|;&<>]*` + memoryFiles), "write to memory bookkeeping files"},
	{regexp.MustCompile(`\b(?:cp|mv)\b(?:\s+[^\s|;&<>]+)+\s+\S*` + memoryFiles), "write to memory bookkeeping files"},
	{regexp.MustCompile(`\bdd\b[^|;&<>]*\bof=\S*` + memoryFiles), "write to memory bookkeeping files"},
	{regexp.MustCompile(`\bsed\s+-i[^|;&<>]*` + memoryFiles), "write to memory bookkeeping files"},
	{regexp.MustCompile(`\btruncate\b[^|;&<>]*` + memoryFiles), "write to memory bookkeeping files"},
}

// urlInCommand finds http(s) URLs in a command line (nanobot's _URL_RE).
var urlInCommand = regexp.MustCompile(`(?i)https?://[^\s"'` + "`" + `;|<>]+`)

// commandGuard decides whether exec may run a command.
type commandGuard struct {
	deny  []denyRule
	allow []*regexp.Regexp
	urls  *SSRFGuard // nil: no internal-URL check
}

// newCommandGuard compiles the configured extra deny and allow patterns
// (Go RE2 syntax, matched against the lower-cased command).
func newCommandGuard(deny, allow []string, urls *SSRFGuard) (*commandGuard, error) {
	g := &commandGuard{deny: append([]denyRule(nil), defaultDenyRules...), urls: urls}
	for _, p := range deny {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("tools.exec.denyPatterns: %q: %w", p, err)
		}
		g.deny = append(g.deny, denyRule{re: re, label: "denyPatterns: " + p})
	}
	for _, p := range allow {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("tools.exec.allowPatterns: %q: %w", p, err)
		}
		g.allow = append(g.allow, re)
	}
	return g, nil
}

// check returns the reason a command is refused, or "" when it may run.
func (g *commandGuard) check(ctx context.Context, command string) string {
	if reason := g.dangerous(command); reason != "" {
		return reason
	}
	lower := strings.ToLower(strings.Trim(command, " \t\r\n"))
	if len(g.allow) > 0 {
		allowed := false
		for _, re := range g.allow {
			if re.MatchString(lower) {
				allowed = true
				break
			}
		}
		if !allowed {
			return "not in allowlist"
		}
	}
	if g.urls != nil {
		for _, u := range urlInCommand.FindAllString(command, 16) {
			var blocked *BlockedError
			if err := g.urls.CheckURL(ctx, u); errors.As(err, &blocked) {
				return "internal/private URL detected: " + blocked.Error()
			}
		}
	}
	return ""
}

// dangerous returns why text matches a deny pattern, as written or
// unobfuscated, or "": what is typed into a shell session is held to it too.
func (g *commandGuard) dangerous(text string) string {
	lower := strings.ToLower(strings.Trim(text, " \t\r\n"))
	label := matchDeny(g.deny, lower)
	if label == "" {
		label = matchDeny(g.deny, unobfuscate(lower))
	}
	if label != "" {
		return "dangerous pattern detected: " + label
	}
	return ""
}

// matchDeny returns the label of the first deny rule lower matches.
func matchDeny(rules []denyRule, lower string) string {
	for _, r := range rules {
		if r.re.MatchString(lower) {
			return r.label
		}
	}
	return ""
}
