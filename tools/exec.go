package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nanobot-durable/nanobot/secrets"
)

// nanobot's exec limits.
const (
	execDefaultTimeout = 60 * time.Second
	execMaxTimeout     = 600 * time.Second
	execMaxOutputChars = 10_000
	// execWaitDelay bounds how long exec waits for output after the shell
	// exits (a background child may hold the pipe open) or is killed.
	execWaitDelay = 2 * time.Second
)

// execBaseEnv are the only variables of the agent's environment a command
// sees besides ExecOptions.AllowedEnvKeys: API keys and other secrets stay out.
var execBaseEnv = []string{"HOME", "LANG", "TERM", "USER", "LOGNAME", "TMPDIR", "TZ"}

// execEnvDefaults fill base variables the agent's environment lacks.
var execEnvDefaults = map[string]string{"HOME": "/tmp", "LANG": "C.UTF-8", "TERM": "dumb"}

const execFallbackPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// ExecOptions configure the exec tool (tools.exec.*).
type ExecOptions struct {
	// Timeout applies when the model gives none; 0 means no limit
	// (tools.exec.timeout 0). DefaultExecOptions sets nanobot's 60 s.
	Timeout time.Duration
	// MaxTimeout caps the model's timeout argument; 0 means 600 s.
	MaxTimeout time.Duration
	// DenyPatterns are extra regexes (RE2) refused on the lower-cased command.
	DenyPatterns []string
	// AllowPatterns, when non-empty, must match the lower-cased command.
	AllowPatterns []string
	// PathPrepend and PathAppend are joined to PATH with ':'.
	PathPrepend, PathAppend string
	// AllowedEnvKeys are passed through from the agent's environment.
	AllowedEnvKeys []string
	// URLGuard, when set, refuses commands naming internal/private URLs.
	URLGuard *SSRFGuard
	// Sandbox, when set, runs every command in it (tools.exec.sandbox "auto"
	// or "bwrap"). Where it cannot run, commands run bare with a warning in
	// the turn's first result, or, with SandboxRequired, are refused.
	Sandbox         *Sandbox
	SandboxRequired bool
	// Secrets are the configured keys: an AllowedEnvKeys variable holding
	// one is not passed on.
	Secrets *secrets.Set
	// Sessions, when set, lets yield_time_ms start a session that outlives
	// the call (and the worker), driven by write_stdin.
	Sessions *ExecSessions
}

// DefaultExecOptions returns nanobot's defaults: 60 s, at most 600 s.
func DefaultExecOptions() ExecOptions {
	return ExecOptions{Timeout: execDefaultTimeout, MaxTimeout: execMaxTimeout}
}

const execDescription = "Execute a shell command (bash -c) in the workspace and return its combined stdout and stderr, " +
	"followed by `Exit code: N` when the command fails. Output over 10000 characters keeps its head and tail with a " +
	"marker in between. timeout is in seconds (default %s, max %d); on timeout or cancellation the whole process " +
	"group is killed. The command gets a minimal environment (PATH, HOME, LANG, TERM…), no stdin, and runs in " +
	"working_dir (default: the workspace). Destructive commands (rm -rf, mkfs, dd, shutdown, …) are refused. " +
	"Prefer read_file/write_file/edit_file/apply_patch over cat/echo/sed, and grep/find_files over shell grep/find. " +
	"Use -y or --yes flags to avoid interactive prompts."

// execSessionNote is nanobot's sentence on sessions, said when they exist here.
const execSessionNote = " For long-running or interactive commands, pass yield_time_ms; if the command keeps running, " +
	"exec returns a session_id that can be polled or written to with write_stdin. Sessions keep running across " +
	"restarts of nanobot; list_exec_sessions shows them."

// execSandboxNote tells the model what the sandbox allows, so it does not
// take a refused write or connection for a bug; the network's part follows.
const execSandboxNote = " Commands run in a sandbox: only the workspace is writable (HOME is the workspace, /tmp is " +
	"private and empty), the rest of the file system is read-only and nanobot's own folder is hidden."

// ExecUnsandboxedWarning ends the first exec result of every turn where the
// sandbox is wanted ("auto") but bwrap cannot run; the banner and status say it too.
const ExecUnsandboxedWarning = "exec is not sandboxed here: the model can read your files and keys; " +
	"install bubblewrap or set tools.exec.sandbox"

const execParameters = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "minLength": 1, "description": "The shell command to execute"},
    "working_dir": {"type": "string", "description": "Optional working directory for the command (default: the workspace)"},
    "timeout": {"type": "integer", "minimum": 1, "maximum": %d, "description": "Timeout in seconds. Increase for long-running commands like compilation or installation (default %s, max %d)."}%s
  },
  "required": ["command"]
}`

// execSessionParameters are nanobot's background arguments of exec.
const execSessionParameters = `,
    "yield_time_ms": {"type": ["integer", "null"], "minimum": 0, "maximum": 30000, "description": "Optional milliseconds to wait before returning output. When set, a still-running command returns a session_id that can be polled or written to with write_stdin. Omit this field to keep one-shot exec behavior."},
    "max_output_chars": {"type": ["integer", "null"], "minimum": 1000, "maximum": 50000, "description": "Maximum output characters to return when yield_time_ms is used (default 10000, max 50000)."},
    "max_output_tokens": {"type": ["integer", "null"], "minimum": 1000, "maximum": 50000, "description": "Compatibility alias for max_output_chars. The current runtime uses a character budget."}`

// ExecTool is the exec built-in.
type ExecTool struct {
	opts   ExecOptions
	guard  *commandGuard
	shell  string
	params json.RawMessage
	desc   string
	warned turnsWarned
}

// NewExec builds the exec tool; it fails on patterns that do not compile.
func NewExec(opts ExecOptions) (*ExecTool, error) {
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = execMaxTimeout
	}
	if opts.Timeout < 0 {
		opts.Timeout = 0
	}
	opts.Timeout = min(opts.Timeout, opts.MaxTimeout)
	guard, err := newCommandGuard(opts.DenyPatterns, opts.AllowPatterns, opts.URLGuard)
	if err != nil {
		return nil, err
	}
	opts.AllowedEnvKeys = withoutSecretValues(opts.AllowedEnvKeys, opts.Secrets)
	shell, err := exec.LookPath("bash")
	if err != nil {
		shell = "/bin/sh"
	}
	maxSecs := int(opts.MaxTimeout / time.Second)
	def := "none"
	if opts.Timeout > 0 {
		def = fmt.Sprintf("%d", int(opts.Timeout/time.Second))
	}
	desc := fmt.Sprintf(execDescription, def, maxSecs)
	sessionParams := ""
	if opts.Sessions != nil {
		desc += execSessionNote
		sessionParams = execSessionParameters
	}
	if sb := opts.Sandbox; sb != nil && (opts.SandboxRequired || sb.Ready() == nil) {
		desc += execSandboxNote + " " + sb.networkNote()
	}
	return &ExecTool{
		opts: opts, guard: guard, shell: shell,
		params: json.RawMessage(fmt.Sprintf(execParameters, maxSecs, def, maxSecs, sessionParams)),
		desc:   desc,
	}, nil
}

func (t *ExecTool) Name() string                { return "exec" }
func (t *ExecTool) Description() string         { return t.desc }
func (t *ExecTool) Parameters() json.RawMessage { return t.params }
func (t *ExecTool) Flags() Flags                { return Flags{Exclusive: true, SideEffects: true} }

func (t *ExecTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	command := StringArg(args, "command")
	if strings.TrimSpace(command) == "" {
		return ErrorResult("Error: command is empty")
	}
	if reason := t.guard.check(ctx, command); reason != "" && !env.Approved {
		return ErrorResult("Error: Command blocked by safety guard (%s)", reason)
	}
	dir, errRes := workingDir(env, args)
	if errRes != nil {
		return *errRes
	}
	timeout := t.opts.Timeout
	if secs := IntArg(args, "timeout", 0); secs > 0 {
		timeout = min(time.Duration(secs)*time.Second, t.opts.MaxTimeout)
	}
	var res Result
	if t.opts.Sessions != nil && args["yield_time_ms"] != nil {
		res = t.startSession(ctx, env, command, dir, timeout, args)
	} else {
		res = t.run(ctx, command, dir, timeout)
	}
	if t.unsandboxed() && t.warned.first(env) {
		res.Text = strings.TrimRight(res.Text, "\n") + "\n\n" + ExecUnsandboxedWarning
	}
	return res
}

// workingDir resolves the working_dir argument (default: the workspace) to an existing folder.
func workingDir(env Env, args map[string]any) (string, *Result) {
	wd := StringArg(args, "working_dir")
	if strings.TrimSpace(wd) == "" {
		wd = "."
	}
	dir, errRes := resolveForTool(env, wd)
	if errRes != nil {
		return "", errRes
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		res := ErrorResult("Error: working_dir is not an existing directory: %s", wd)
		return "", &res
	}
	return dir, nil
}

// RetrySafe: a session's start is keyed by the call, so a retry finds it
// instead of starting another; a one-shot command is not.
func (t *ExecTool) RetrySafe(args map[string]any) bool {
	return t.opts.Sessions != nil && args["yield_time_ms"] != nil
}

// unsandboxed reports whether commands run bare where the sandbox was wanted.
func (t *ExecTool) unsandboxed() bool { return t.opts.unsandboxed() }

// unsandboxed reports whether commands run bare: the sandbox is only wanted
// ("auto") and bwrap cannot run here.
func (o ExecOptions) unsandboxed() bool {
	return o.Sandbox != nil && !o.SandboxRequired && o.Sandbox.Ready() != nil
}

// runGroup runs cmd in its own process group, so a timeout or cancel of
// runCtx kills everything it started, not only its first process.
func runGroup(runCtx context.Context, cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = execWaitDelay
	err := cmd.Run()
	if runCtx.Err() != nil && cmd.Process != nil {
		_ = killGroup(cmd) // the first process may have exited, leaving children behind
	}
	return err
}

// command is the shell running command in dir, inside the sandbox when sandboxed.
func (t *ExecTool) command(ctx context.Context, command, dir string, sandboxed bool) (*exec.Cmd, error) {
	if sandboxed {
		return t.opts.Sandbox.Command(ctx, dir, t.shell, "-c", command)
	}
	cmd := exec.CommandContext(ctx, t.shell, "-c", command)
	cmd.Dir = dir
	return cmd, nil
}

// run executes command in its own process group and renders the outcome.
func (t *ExecTool) run(ctx context.Context, command, dir string, timeout time.Duration) Result {
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()

	out := newHeadTailBuffer(execMaxOutputChars * 8)
	sandboxed := t.opts.Sandbox != nil && !t.unsandboxed()
	if sandboxed {
		if err := t.opts.Sandbox.Ready(); err != nil {
			return ErrorResult("Error: the command was not run: tools.exec.sandbox is %q but %v. Commands never run "+
				"outside the sandbox; tell the user to install bubblewrap or turn the sandbox off.", SandboxBwrap, err)
		}
	}
	cmd, err := t.command(runCtx, command, dir, sandboxed)
	if err != nil {
		return ErrorResult("Error executing command: %v", err)
	}
	cmd.Env = t.environ()
	cmd.Stdout, cmd.Stderr = out, out
	err = runGroup(runCtx, cmd)

	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return ErrorResult("Error: Command cancelled (%v); its process group was killed%s", ctx.Err(), partial(out))
	case timeout > 0 && errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return ErrorResult("Error: Command timed out after %s; its process group was killed%s", formatSeconds(timeout), partial(out))
	case errors.As(err, &exitErr):
		return TextResult(out.render(execMaxOutputChars, exitLine(exitErr)))
	case err != nil && cmd.Process == nil:
		return ErrorResult("Error executing command: %v", err)
	}
	// err may be exec.ErrWaitDelay: the shell exited but a background child kept the pipe open.
	return TextResult(out.render(execMaxOutputChars, ""))
}

// environ builds the command's minimal environment.
func (t *ExecTool) environ() []string { return commandEnviron(t.opts) }

// commandEnviron is the minimal environment of a command the model runs
// (exec's, run_cli_app's); pathAppend go after tools.exec's PATH.
func commandEnviron(opts ExecOptions, pathAppend ...string) []string {
	vars := map[string]string{}
	for _, k := range append(append([]string(nil), execBaseEnv...), opts.AllowedEnvKeys...) {
		if v, ok := os.LookupEnv(k); ok {
			vars[k] = v
		}
	}
	for k, v := range execEnvDefaults {
		if _, ok := vars[k]; !ok {
			vars[k] = v
		}
	}
	path := os.Getenv("PATH")
	if path == "" {
		path = execFallbackPath
	}
	if opts.PathPrepend != "" {
		path = opts.PathPrepend + ":" + path
	}
	if opts.PathAppend != "" {
		path = path + ":" + opts.PathAppend
	}
	for _, p := range pathAppend {
		path += ":" + p
	}
	vars["PATH"] = path
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// withoutSecretValues drops the keys whose value in this process's
// environment holds a configured secret, warning about each.
func withoutSecretValues(keys []string, set *secrets.Set) []string {
	var out []string
	for i, k := range keys {
		if v, ok := os.LookupEnv(k); ok && set.Redact(v) != v {
			slog.Warn("tools.exec.allowedEnvKeys: not passed to exec commands: its value is a configured secret",
				"key", fmt.Sprintf("tools.exec.allowedEnvKeys[%d]", i), "variable", k)
			continue
		}
		out = append(out, k)
	}
	return out
}

// killGroup SIGKILLs the command's whole process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// exitLine renders a failure's exit status the way a shell reports it.
func exitLine(e *exec.ExitError) string {
	code := e.ExitCode()
	if ws, ok := e.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("Exit code: %d (killed by signal %s)", 128+int(ws.Signal()), ws.Signal())
	}
	if code == 0 {
		return ""
	}
	return fmt.Sprintf("Exit code: %d", code)
}

// partial appends whatever the command printed before it was stopped.
func partial(out *headTailBuffer) string {
	text := out.render(execMaxOutputChars, "")
	if strings.TrimSpace(text) == "" {
		return ""
	}
	return "\n\nPartial output:\n" + text
}

func formatSeconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d seconds", int(d/time.Second))
	}
	return d.String()
}

// turnsWarned remembers, per session, the last turn whose exec result
// carried the unsandboxed warning, so each turn gets it once.
type turnsWarned struct {
	mu   sync.Mutex
	last map[string]string
}

// turnsWarnedMax bounds the sessions remembered; past it the map starts over (an extra warning at worst).
const turnsWarnedMax = 4096

// first reports whether this is the turn's first warned result; a call
// without a turn (a caller that does not say) is always warned.
func (w *turnsWarned) first(env Env) bool {
	if env.Turn == "" {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last[env.SessionKey] == env.Turn {
		return false
	}
	if w.last == nil || len(w.last) >= turnsWarnedMax {
		w.last = map[string]string{}
	}
	w.last[env.SessionKey] = env.Turn
	return true
}
