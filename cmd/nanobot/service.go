package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/atomicfile"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/secrets"
	"github.com/nanobot-durable/nanobot/tools"
)

// serviceEnvNames are the variables outside the NANOBOT_ and TEMPORAL_
// prefixes this binary (or what it starts: exec, MCP servers, temporal-dev) reads.
var serviceEnvNames = []string{
	"PATH", "LANG", "LC_ALL", "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"OPENAI_API_KEY", "OPENAI_BASE_URL",
}

// envVar is one NAME=value of the service's environment.
type envVar struct{ name, value string }

// serviceUnit is what `install-service` writes: a systemd user unit with the
// plain settings inline and, in an EnvironmentFile only its owner may read,
// every variable that holds (or may hold) a secret.
type serviceUnit struct {
	command string   // gateway or worker
	exec    []string // ExecStart's words: this binary, --config, the command, extra flags
	plain   []envVar // Environment= lines
	secret  []envVar // the EnvironmentFile's lines
	envFile string
	stop    time.Duration // how long a SIGTERM'd process may take to finish its activities
}

// buildServiceUnit picks from environ the variables the service needs, and
// sorts them into plain and secret: a secret-looking name, a value the
// config's secrets hold, or a URL with a password is never written inline.
func buildServiceUnit(command, exe, configPath, envFile string, extra []string, environ []string, cfg *config.Config, known *secrets.Set) serviceUnit {
	u := serviceUnit{command: command, envFile: envFile, stop: stopTimeout() + 30*time.Second}
	u.exec = []string{exe}
	if configPath != "" {
		u.exec = append(u.exec, "--config", configPath)
	}
	u.exec = append(append(u.exec, command), extra...)
	wanted := map[string]bool{}
	for _, n := range serviceEnvNames {
		wanted[n] = true
	}
	for _, s := range providers.Specs() {
		if s.EnvKey != "" {
			wanted[s.EnvKey] = true
		}
	}
	for _, n := range append(tools.SearchEnvKeys(), cfg.Tools.Exec.AllowedEnvKeys...) {
		wanted[n] = true
	}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !(wanted[name] || strings.HasPrefix(name, "NANOBOT_") || strings.HasPrefix(name, "TEMPORAL_")) {
			continue
		}
		if name == "NANOBOT_CONFIG" || slices.Contains(tlsPathVariables(), name) {
			if abs, err := filepath.Abs(config.ExpandHome(value)); err == nil {
				value = abs // the unit runs in the home directory
			}
		}
		v := envVar{name, value}
		if secrets.SecretName(name) || known.Redact(value) != value || hasPassword(value) {
			u.secret = append(u.secret, v)
		} else {
			u.plain = append(u.plain, v)
		}
	}
	byName := func(a, b envVar) int { return strings.Compare(a.name, b.name) }
	slices.SortFunc(u.plain, byName)
	slices.SortFunc(u.secret, byName)
	return u
}

func hasPassword(value string) bool {
	p, err := url.Parse(value)
	if err != nil || p.User == nil {
		return false
	}
	_, ok := p.User.Password()
	return ok
}

// unitName is the unit's file name.
func (u serviceUnit) unitName() string { return "nanobot-" + u.command + ".service" }

// unit is the unit file's text.
func (u serviceUnit) unit() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `nanobot %s install-service`; run it again to rewrite this file and %s.\n", u.command, u.envFile)
	fmt.Fprintf(&b, "[Unit]\nDescription=nanobot %s (a durable agent on Temporal)\n\n", u.command)
	b.WriteString("[Service]\nType=simple\n")
	words := make([]string, len(u.exec))
	for i, w := range u.exec {
		words[i] = strings.ReplaceAll(unitQuote(w), "$", "$$")
	}
	fmt.Fprintf(&b, "ExecStart=%s\n", strings.Join(words, " "))
	b.WriteString("Restart=on-failure\nRestartSec=5\n")
	b.WriteString("# SIGTERM to nanobot alone: it lets running activities finish, then stops what it started.\n")
	fmt.Fprintf(&b, "KillMode=mixed\nTimeoutStopSec=%d\n", int(u.stop.Seconds()))
	for _, v := range u.plain {
		fmt.Fprintf(&b, "Environment=%s\n", unitQuote(v.name+"="+v.value))
	}
	fmt.Fprintf(&b, "EnvironmentFile=%s\n", unitQuote(u.envFile))
	b.WriteString("\n[Install]\nWantedBy=default.target\n")
	return b.String()
}

// envFileText is the EnvironmentFile's text: one quoted NAME="value" a line.
func (u serviceUnit) envFileText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The secrets of %s (keep this file 0600); written by `nanobot %s install-service`.\n", u.unitName(), u.command)
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	for _, v := range u.secret {
		fmt.Fprintf(&b, "%s=\"%s\"\n", v.name, r.Replace(v.value))
	}
	return b.String()
}

// unitQuote makes one word of a unit file setting: double-quoted with C
// escapes when it holds a space, quote or backslash; % doubled always
// (systemd expands specifiers even inside quotes).
func unitQuote(s string) string {
	s = strings.ReplaceAll(s, "%", "%%")
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\;") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// installService writes the systemd user unit of `nanobot gateway` (or
// worker) and its EnvironmentFile, and says how to start it. It runs no systemctl.
func (a *app) installService(command string, args []string) error {
	fs := a.flags(command + " install-service")
	output := fs.String("output", "", "write the unit here (default ~/.config/systemd/user/nanobot-"+command+".service)")
	toStdout := fs.Bool("print", false, "print the unit instead of writing it (the EnvironmentFile is still written)")
	fs.Usage = func() {
		fmt.Fprintf(a.stderr, "usage: nanobot %s install-service [--config FILE] [--output FILE | --print] [-- FLAGS for the service]\n", command)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil { // what follows the flags goes to the service's command line
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if *output != "" && *toStdout {
		return usageError{fmt.Errorf("%s install-service: --output and --print exclude each other", command)}
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("install-service: this binary's path: %w", err)
	}
	configPath := ""
	if a.configPath != "" {
		if configPath, err = filepath.Abs(config.ExpandHome(a.configPath)); err != nil {
			return fmt.Errorf("install-service: --config: %w", err)
		}
	}
	envFile := filepath.Join(config.ConfigDir(cfg.Path), "nanobot-"+command+".env")
	u := buildServiceUnit(command, exe, configPath, envFile, fs.Args(), os.Environ(), cfg, a.secrets)
	if err := os.MkdirAll(filepath.Dir(envFile), 0o700); err != nil {
		return fmt.Errorf("install-service: %w", err)
	}
	if err := atomicfile.Write(envFile, []byte(u.envFileText()), 0o600); err != nil {
		return fmt.Errorf("install-service: environment file: %w", err)
	}
	if *toStdout {
		fmt.Fprint(a.stdout, u.unit())
		fmt.Fprintf(a.stderr, "wrote %s (mode 0600, %d variables)\n", envFile, len(u.secret))
		return nil
	}
	path := *output
	if path == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return fmt.Errorf("install-service: where systemd user units go: %w (use --output FILE)", err)
		}
		path = filepath.Join(dir, "systemd", "user", u.unitName())
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("install-service: %w", err)
	}
	if err := atomicfile.Write(path, []byte(u.unit()), 0o644); err != nil {
		return fmt.Errorf("install-service: unit: %w", err)
	}
	fmt.Fprintf(a.stdout, "wrote %s\nwrote %s (mode 0600, %d variables)\n", path, envFile, len(u.secret))
	if *output != "" {
		fmt.Fprintf(a.stdout, "systemd reads user units from ~/.config/systemd/user/: link it there first:\n  systemctl --user link %s\n", path)
	}
	fmt.Fprintf(a.stdout, "Start it now and at every login:\n  systemctl --user daemon-reload && systemctl --user enable --now nanobot-%s\n", command)
	fmt.Fprintf(a.stdout, "Keep it running while you are logged out:\n  loginctl enable-linger %s\n", os.Getenv("USER"))
	return nil
}
