package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/cliapps"
)

// run_cli_app's limits (nanobot's).
const (
	cliAppMaxTimeout     = 600 * time.Second
	cliAppMaxOutputChars = 12_000
	cliAppMaxStreamBytes = 1 << 20
)

const runCLIAppParameters = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "Installed CLI app registry name, for example gimp, safari, or obsidian."},
    "args": {"type": ["array", "null"], "items": {"type": "string", "description": "One command-line argument."}, "description": "Arguments to pass to the CLI entry point. Do not include the entry point itself."},
    "json": {"type": ["boolean", "null"], "default": false, "description": "Whether to prepend --json when supported by the CLI."},
    "working_dir": {"type": ["string", "null"], "description": "Optional working directory for the CLI call."},
    "timeout": {"type": ["integer", "null"], "minimum": 1, "maximum": 600, "description": "Timeout in seconds for this CLI call."}
  },
  "required": ["name"]
}`

// RunCLIAppTool is run_cli_app: an app the owner installed (`nanobot
// cli-apps install`) run by name with argv, no shell, in exec's sandbox and
// minimal environment.
type RunCLIAppTool struct {
	apps *cliapps.Manager
	// exec gives the sandbox, PATH and environment rules; its timeouts are not used.
	exec       ExecOptions
	runTimeout time.Duration
}

// NewRunCLIApp builds run_cli_app; runTimeout 0 is nanobot's 60 s.
func NewRunCLIApp(apps *cliapps.Manager, exec ExecOptions, runTimeout time.Duration) *RunCLIAppTool {
	if runTimeout <= 0 {
		runTimeout = cliapps.DefaultRunTimeout
	}
	return &RunCLIAppTool{apps: apps, exec: exec, runTimeout: min(runTimeout, cliAppMaxTimeout)}
}

func (t *RunCLIAppTool) Name() string                { return "run_cli_app" }
func (t *RunCLIAppTool) Parameters() json.RawMessage { return json.RawMessage(runCLIAppParameters) }
func (t *RunCLIAppTool) Flags() Flags                { return Flags{SideEffects: true} }

// Description names the installed apps, read at each turn (an install needs no restart).
func (t *RunCLIAppTool) Description() string {
	note := " No Settings CLI Apps are currently installed."
	if names := t.apps.InstalledNames(); len(names) > 0 {
		note = " Installed Settings CLI Apps: " + strings.Join(names, ", ") + "."
	}
	return "Run a CLI App that the user explicitly installed in Settings or attached as @app. " +
		"Do not use this for ordinary system CLIs such as git, gh, python, npm, or brew; " +
		"unknown names are rejected. Execution uses argv, not shell." + note
}

func (t *RunCLIAppTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	name := strings.TrimSpace(StringArg(args, "name"))
	app, ok, err := t.apps.Lookup(name)
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	if !ok {
		for _, a := range t.apps.CachedCatalog() {
			if strings.EqualFold(a.Name, name) {
				return ErrorResult("Error: CLI app '%s' is not installed", name)
			}
		}
		return ErrorResult("Error: CLI app '%s' not found", name)
	}
	dir, errRes := workingDir(env, args)
	if errRes != nil {
		return *errRes
	}
	entry, err := t.apps.Which(app.EntryPoint)
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	argv := stringList(args["args"])
	if BoolArg(args, "json", false) && !slices.Contains(argv, "--json") {
		argv = append([]string{"--json"}, argv...)
	}
	timeout := t.runTimeout
	if secs := IntArg(args, "timeout", 0); secs > 0 {
		timeout = min(time.Duration(secs)*time.Second, cliAppMaxTimeout)
	}

	before := artifactSnapshot(dir)
	stdout, stderr, code, res := t.run(ctx, dir, entry, argv, timeout)
	if res != nil {
		return *res
	}
	out := []string{
		fmt.Sprintf("CLI app '%s' exited %d.", name, code),
		strings.TrimRight("Command: "+app.EntryPoint+" "+shellQuoteAll(argv), " "),
	}
	if stdout != "" {
		out = append(out, "\nSTDOUT:\n"+strings.TrimRight(stdout, "\n"))
	}
	if stderr != "" {
		out = append(out, "\nSTDERR:\n"+strings.TrimRight(stderr, "\n"))
	}
	out = append(out, artifactReport(dir, before)...)
	text := strings.Join(out, "\n")
	if len(text) > cliAppMaxOutputChars {
		text = text[:cliAppMaxOutputChars] + fmt.Sprintf("\n\n... truncated %d characters ...", len(text)-cliAppMaxOutputChars)
	}
	return TextResult(text)
}

// run starts entry in the sandbox when there is one (the installs' folders
// shown read-only), else bare where the sandbox is only wanted.
func (t *RunCLIAppTool) run(ctx context.Context, dir, entry string, argv []string, timeout time.Duration) (stdout, stderr string, code int, res *Result) {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var cmd *exec.Cmd
	sb := t.exec.Sandbox
	unsandboxed := t.exec.unsandboxed()
	if sb != nil && !unsandboxed {
		var roots []string
		for _, r := range t.apps.Roots() {
			if _, err := os.Stat(r); err == nil {
				roots = append(roots, r)
			}
		}
		c, err := sb.CommandReading(runCtx, roots, dir, append([]string{entry}, argv...)...)
		if err != nil {
			r := ErrorResult("Error: the CLI app was not run: %v. Apps never run outside the sandbox; tell the user "+
				"to install bubblewrap or turn the sandbox off.", err)
			return "", "", 0, &r
		}
		cmd = c
	} else {
		cmd = exec.CommandContext(runCtx, entry, argv...)
		cmd.Dir = dir
	}
	cmd.Env = commandEnviron(t.exec, t.apps.BinDirs()...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitedBuffer{&out}, &limitedBuffer{&errOut}
	err := runGroup(runCtx, cmd)
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r := ErrorResult("Error: CLI app cancelled (%v)", ctx.Err())
		return "", "", 0, &r
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		r := ErrorResult("Error: CLI app timed out after %ds", int(timeout/time.Second))
		return "", "", 0, &r
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil && cmd.Process == nil:
		r := ErrorResult("Error: running %s: %v", entry, err)
		return "", "", 0, &r
	}
	stdout, stderr = out.String(), errOut.String()
	if unsandboxed {
		stderr = strings.TrimRight(stderr+"\n"+ExecUnsandboxedWarning, "\n")
	}
	return stdout, stderr, code, nil
}

// limitedBuffer keeps the first cliAppMaxStreamBytes of a stream and drops the rest.
type limitedBuffer struct{ b *bytes.Buffer }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := cliAppMaxStreamBytes - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func stringList(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, fmt.Sprint(it))
	}
	return out
}

// shellQuoteAll renders argv the way a shell would need it (for the model's reading only).
func shellQuoteAll(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '+' ||
				r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) < 0 {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'"'"'`) + "'"
		}
	}
	return strings.Join(q, " ")
}
