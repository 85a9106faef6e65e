package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/session"
)

// runNanobot runs the binary to completion and returns stdout, stderr and the exit code.
func runNanobot(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testenv.NanobotBin(t), args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	require.NoError(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return stdout.String(), stderr.String(), code
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("nanobot %v did not finish; stdout:\n%s\nstderr:\n%s", args, stdout.String(), stderr.String())
		return "", "", -1
	}
}

// sessionLines reads a session's JSONL file as written by nanobot.
func sessionLines(t *testing.T, h *testenv.Home, key string) (map[string]any, []chat.Message) {
	t.Helper()
	store, err := session.NewJSONLStore(session.SessionsDir(filepath.Dir(h.ConfigPath), h.Workspace), nil)
	require.NoError(t, err)
	f, err := os.Open(store.Path(key))
	require.NoError(t, err, "session file of %s", key)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var meta map[string]any
	var msgs []chat.Message
	for sc.Scan() {
		line := sc.Bytes()
		if meta == nil {
			require.NoError(t, json.Unmarshal(line, &meta))
			require.Equal(t, "metadata", meta["_type"])
			continue
		}
		var m chat.Message
		require.NoError(t, json.Unmarshal(line, &m), "line %s", line)
		msgs = append(msgs, m)
	}
	require.NoError(t, sc.Err())
	return meta, msgs
}

// answering is a model that answers a user message containing a key of
// replies with its value, and anything else with "Hello again.".
func answering(replies map[string]string) *modeltest.Server {
	return modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1]
		for key, reply := range replies {
			if strings.Contains(last.Content, key) {
				return modeltest.Text(reply)
			}
		}
		return modeltest.Text("Hello again.")
	})
}

// noteTaker is the model of the channels' conversation tests: "save a
// note" writes note.txt (content) with a tool call, whose result it
// acknowledges; otherwise it answers as answering does.
func noteTaker(content string, replies map[string]string) *modeltest.Server {
	return modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == "tool":
			return modeltest.Text("Saved it to note.txt.")
		case strings.Contains(last.Content, "save a note"):
			return modeltest.ToolCalls(modeltest.Call{ID: "call_1", Name: "write_file", Args: `{"path":"note.txt","content":"` + content + `"}`})
		}
		for key, reply := range replies {
			if strings.Contains(last.Content, key) {
				return modeltest.Text(reply)
			}
		}
		return modeltest.Text("Hello again.")
	})
}

// embeddedEnv is a newcomer's environment for home: no TEMPORAL_ADDRESS, so nanobot starts
// temporal-dev itself (found on PATH), on free ports; it returns the env and the Web UI port.
func embeddedEnv(t *testing.T, home *testenv.Home, extra ...string) ([]string, int) {
	t.Helper()
	var env []string
	for _, kv := range home.Env("") {
		if strings.HasPrefix(kv, "TEMPORAL_ADDRESS=") {
			continue
		}
		if strings.HasPrefix(kv, "PATH=") {
			kv = "PATH=" + filepath.Dir(testenv.DevServerBin(t)) + ":" + strings.TrimPrefix(kv, "PATH=")
		}
		env = append(env, kv)
	}
	uiPort := testenv.FreePort(t)
	env = append(env, "NANOBOT_DEV_PORT="+strconv.Itoa(testenv.FreePort(t)), "NANOBOT_DEV_UI_PORT="+strconv.Itoa(uiPort))
	return append(env, extra...), uiPort
}

// devPort is the embedded server's port in an embeddedEnv.
func devPort(env []string) int {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "NANOBOT_DEV_PORT="); ok {
			port, _ := strconv.Atoi(v)
			return port
		}
	}
	return 0
}
