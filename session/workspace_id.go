package session

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// nanobot names a workspace's session folder by the id in this file, which
// it writes the first time it opens the workspace.
const workspaceIDFile = ".nanobot/workspace-id"

var workspaceIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// SessionsDir is nanobot's layout, <config dir>/sessions/<workspace id>: the
// id nanobot wrote into <workspace>/.nanobot/workspace-id when there is one
// (so a nanobot user's history comes along), else a hash of the workspace path.
func SessionsDir(configDir, workspace string) string {
	id, err := WorkspaceID(workspace)
	if err != nil || id == "" {
		id = pathID(workspace)
	}
	return filepath.Join(configDir, "sessions", id)
}

// WorkspaceID reads nanobot's workspace id: "" without the file, an error
// when the file is there but unusable (a symlink, not 32 hex digits), in
// which case SessionsDir keeps to the path hash.
func WorkspaceID(workspace string) (string, error) {
	marker := filepath.Join(workspace, workspaceIDFile)
	for _, p := range []string{filepath.Dir(marker), marker} {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("workspace id %s: %w", marker, err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("workspace id: %s is a symlink; nanobot refuses it, and so do we", p)
		}
	}
	data, err := os.ReadFile(marker)
	if err != nil {
		return "", fmt.Errorf("workspace id: %w", err)
	}
	id := strings.TrimSpace(string(data))
	if !workspaceIDPattern.MatchString(id) {
		return "", fmt.Errorf("workspace id %s: %q is not nanobot's 32 hex digits", marker, id)
	}
	return id, nil
}

// pathID names the session folder of a workspace nanobot never opened.
func pathID(workspace string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return hex.EncodeToString(sum[:])[:12]
}

// UnreadSessionsDir is the folder of a workspace's earlier sessions that
// SessionsDir no longer reads, "" when there is none: sessions this
// project kept under the path hash before nanobot gave the workspace an id.
func UnreadSessionsDir(configDir, workspace string) string {
	old := filepath.Join(configDir, "sessions", pathID(workspace))
	if old == SessionsDir(configDir, workspace) {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(old, "*.jsonl"))
	if len(matches) == 0 {
		return ""
	}
	return old
}
