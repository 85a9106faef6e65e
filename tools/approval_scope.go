package tools

import (
	"encoding/json"
	"path"
	"regexp"
	"strings"
)

// What "always" covers. An always-approval covers the exact call: for exec
// the command, whitespace-normalised; for any other tool the tool and its
// key argument. A rule covers a program and its subcommand ("npm test"),
// offered only for a simple command and matching only simple ones.

// exactKey is the call an "always" covers: "exec rm -rf build", "write_file notes/a.md".
func exactKey(name string, args map[string]any, argsJSON string) string {
	if name == "exec" {
		return name + " " + normalizeCommand(StringArg(args, "command"))
	}
	if _, v := KeyArg(argsJSON); v != "" {
		return name + " " + v
	}
	b, _ := json.Marshal(args) // no key argument: the whole call, keys sorted
	return name + " " + string(b)
}

// normalizeCommand is the command with its runs of whitespace as one space.
func normalizeCommand(command string) string { return strings.Join(strings.Fields(command), " ") }

// shellOperators are what makes a command more than one program run: lists,
// pipes, background jobs, substitutions, redirections, line breaks.
var shellOperators = regexp.MustCompile("[;&|`<>\n\r]|\\$\\(")

// ruleWord is a program or subcommand a rule may name: no flag, no
// assignment, no quoting or expansion.
var (
	ruleProgram    = regexp.MustCompile(`^[A-Za-z0-9_./][A-Za-z0-9_./+-]*$`)
	ruleSubcommand = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:+-]*$`)
)

// simpleCommand reports whether command runs one program, as written and as
// the unobfuscated reading sees it (a "$'\x3b'" is not a second command, but
// nothing that reads like one passes).
func simpleCommand(command string) bool {
	return !shellOperators.MatchString(command) && !shellOperators.MatchString(unobfuscate(strings.ToLower(command)))
}

// commandRule is the prefix rule of a simple exec command made of a program
// and a subcommand word ("npm test -- --watch" → "exec npm test"), "" when
// the command is not one: a rule is offered for it, and a stored rule covers
// it, only then.
func commandRule(command string) string {
	if !simpleCommand(command) {
		return ""
	}
	words := strings.Fields(command)
	if len(words) < 2 || !ruleProgram.MatchString(words[0]) || !ruleSubcommand.MatchString(words[1]) || runsAnother[path.Base(words[0])] {
		return ""
	}
	return "exec " + words[0] + " " + words[1]
}

// runsAnother are programs whose next word is another program or a place to
// run anything: their "subcommand" would cover every command.
var runsAnother = map[string]bool{
	"sudo": true, "doas": true, "su": true, "env": true, "xargs": true, "nohup": true, "timeout": true, "nice": true,
	"ionice": true, "exec": true, "eval": true, "command": true, "builtin": true, "time": true, "watch": true,
	"setsid": true, "stdbuf": true, "chroot": true, "unshare": true, "nsenter": true, "strace": true, "ltrace": true,
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "busybox": true, "ssh": true,
}
