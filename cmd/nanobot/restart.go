package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// nanobot's variables that carry a /restart over the exec: who asked, and when.
const (
	restartChannelEnv  = "NANOBOT_RESTART_NOTIFY_CHANNEL"
	restartChatIDEnv   = "NANOBOT_RESTART_NOTIFY_CHAT_ID"
	restartMetadataEnv = "NANOBOT_RESTART_NOTIFY_METADATA"
	restartStartedEnv  = "NANOBOT_RESTART_STARTED_AT"
)

// errRestart ends a gateway that was asked to /restart: run re-executes
// the binary once everything was stopped and closed.
type errRestart struct {
	from protocol.Route
	mode string // gateway.restartMode: auto, exec or spawn
}

func (e errRestart) Error() string { return "restart asked from " + e.from.String() }

// restartProcess replaces this process by a fresh one with the same
// arguments (exec; spawn starts it and exits), telling it which chat to
// say "Restart completed" in. Only a failure returns.
func restartProcess(r errRestart, stderr *os.File) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	meta, _ := json.Marshal(map[string]string{"thread_id": r.from.ThreadID})
	env := append(os.Environ(),
		restartChannelEnv+"="+r.from.Channel, restartChatIDEnv+"="+r.from.ChatID,
		restartMetadataEnv+"="+string(meta),
		restartStartedEnv+"="+strconv.FormatFloat(float64(time.Now().UnixMilli())/1000, 'f', 3, 64))
	if r.mode == "spawn" {
		cmd := exec.Command(exe, os.Args[1:]...)
		cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, os.Stdin, os.Stdout, stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("restart: start %s: %w", exe, err)
		}
		return nil
	}
	return fmt.Errorf("restart: exec %s: %w", exe, syscall.Exec(exe, os.Args, env))
}

// announceRestart says "Restart completed in N s." in the chat that asked
// for the restart this process comes from, and forgets it.
func announceRestart(ctx context.Context, mgr *channels.Manager, log *slog.Logger) {
	channel, chatID := os.Getenv(restartChannelEnv), os.Getenv(restartChatIDEnv)
	started, _ := strconv.ParseFloat(os.Getenv(restartStartedEnv), 64)
	var meta struct {
		ThreadID string `json:"thread_id"`
	}
	_ = json.Unmarshal([]byte(os.Getenv(restartMetadataEnv)), &meta)
	for _, k := range []string{restartChannelEnv, restartChatIDEnv, restartMetadataEnv, restartStartedEnv} {
		_ = os.Unsetenv(k) // said once: a later restart by a supervisor says nothing
	}
	if channel == "" || chatID == "" {
		return
	}
	elapsed := max(0, float64(time.Now().UnixMilli())/1000-started)
	r := channels.Reply{Route: protocol.Route{Channel: channel, ChatID: chatID, ThreadID: meta.ThreadID},
		Text: fmt.Sprintf(channels.RestartedReply, elapsed), Kind: protocol.ReplySystem}
	if err := mgr.Send(ctx, r); err != nil {
		log.Warn("could not say the restart is done", "channel", channel, "chat", chatID, "error", err)
	}
}

// asRestart is the restart err asks for, if any.
func asRestart(err error) (errRestart, bool) {
	var r errRestart
	return r, errors.As(err, &r)
}
