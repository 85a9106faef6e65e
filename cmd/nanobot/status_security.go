package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/workers"
)

// writeSecurity prints status's Security block: what the model's commands
// can reach, who may approve, and who can reach nanobot and its Temporal.
func writeSecurity(out io.Writer, cfg *config.Config, getenv func(string) string) {
	sandbox, network, alarm := workers.SandboxState(cfg)
	if alarm {
		sandbox = "! " + sandbox + "; " + workers.BwrapHint
	}
	lines := []string{
		"Sandbox:   " + sandbox,
		"Network:   " + network,
		"Approvals: " + approvalLine(cfg.Tools.Approval),
		"Owner key: " + ownerKeyLine(cfg, execRunsBare(cfg, alarm)),
	}
	for _, l := range securityExposure(cfg, getenv).lines() {
		// exposure's lines are aligned for 10 columns; the block's labels take 11.
		name, rest, _ := strings.Cut(l, ":")
		lines = append(lines, fmt.Sprintf("%-11s%s", name+":", strings.TrimLeft(rest, " ")))
	}
	fmt.Fprintln(out, "Security:")
	for _, l := range lines {
		fmt.Fprintln(out, "  "+l)
	}
}

// approvalLine says which calls wait for a person and who may answer.
func approvalLine(a config.Approval) string {
	who := "; answered only from the chat that asked or the owner's CLI, with a proof the turn checks"
	switch a.Mode {
	case "risky":
		what := "risky calls (commands the exec guard refuses, git push, sudo, …"
		if len(a.Commands) > 0 {
			what = fmt.Sprintf("risky calls (commands the exec guard refuses, %d tools.approval.commands", len(a.Commands))
		}
		if len(a.Tools) > 0 {
			what += ", tools " + strings.Join(a.Tools, ", ")
		}
		return "risky: " + what + ", writes outside the workspace) wait for a person" + who
	case "all":
		return "all: every call that changes something waits for a person" + who
	}
	return `off (tools.approval.mode): no call waits for a person; "risky" asks before risky commands`
}

// execRunsBare reports whether exec runs outside any sandbox (off, or auto without bwrap).
func execRunsBare(cfg *config.Config, alarm bool) bool {
	mode := cfg.Tools.Exec.SandboxMode()
	return mode == config.SandboxNone || (alarm && mode != config.SandboxBwrap)
}

// ownerKeyLine says where the key that seals owner and chat messages is, and whether it is safe.
func ownerKeyLine(cfg *config.Config, bare bool) string {
	path := owner.FileIn(config.ConfigDir(cfg.Path)).Path
	st, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		if cfg.Database.URL != "" || os.Getenv("NANOBOT_DATABASE_URL") != "" {
			return path + " absent: the database's key is used"
		}
		return path + " absent: written at the next start"
	case err != nil:
		return "! " + path + ": " + err.Error()
	case st.Mode().Perm()&0o077 != 0:
		return fmt.Sprintf("! %s is mode %04o: others can read it; chmod 600 %s", path, st.Mode().Perm(), filepath.Base(path))
	}
	if bare {
		return "! " + path + " (0600) is readable by exec, which runs outside a sandbox: the model could approve its own calls"
	}
	return path + " (0600), hidden from the sandbox"
}
