package tools

import (
	"errors"
	"fmt"
	"path/filepath"
)

// ErrPrivatePath marks a path in nanobot's own folders (Env.Private): the
// config with its keys, the sessions. No tool reads or writes there, whatever
// tools.restrictToWorkspace says.
var ErrPrivatePath = errors.New("in nanobot's private area")

// privacy decides which resolved paths Env.Private puts out of reach.
type privacy struct {
	ws      string // the symlink-resolved workspace; "" when unknown
	private []string
}

func newPrivacy(env Env) privacy {
	pv := privacy{private: env.Private}
	if len(env.Private) == 0 {
		return pv
	}
	if ws, err := workspaceDir(env); err == nil {
		if r, err := resolveSymlinks(ws); err == nil {
			pv.ws = r
		}
	}
	return pv
}

// hides returns the private path that covers p, or "". The workspace stays
// usable when it lies inside a private folder (~/.nanobot/workspace), but a
// private path inside the workspace (a config kept there) stays private.
func (pv privacy) hides(p string) string {
	for _, d := range pv.private {
		if !within(d, p) {
			continue
		}
		insideWS := pv.ws != "" && within(pv.ws, d) && d != pv.ws
		if insideWS || pv.ws == "" || !within(pv.ws, p) {
			return d
		}
	}
	return ""
}

// leadsToWorkspace reports whether dir holds the workspace: a walk goes
// through it, showing nothing else of it.
func (pv privacy) leadsToWorkspace(dir string) bool {
	return pv.ws != "" && within(dir, pv.ws)
}

// skip tells a walk to leave p out: a private file, or a private folder
// that does not lead to the workspace (skipDir).
func (pv privacy) skip(p string, isDir bool) (skip, skipDir bool) {
	if pv.hides(p) == "" {
		return false, false
	}
	if isDir && pv.leadsToWorkspace(p) {
		return true, false
	}
	return true, isDir
}

// checkPrivate refuses a resolved path covered by Env.Private.
func checkPrivate(env Env, p, resolved string) error {
	d := newPrivacy(env).hides(resolved)
	if d == "" {
		return nil
	}
	shown := fmt.Sprintf("%q", p)
	if resolved != filepath.Clean(p) {
		shown += " (resolves to " + resolved + ")"
	}
	return fmt.Errorf("path %s is %w %s (its config, API keys and sessions): no tool may read or write it", shown, ErrPrivatePath, d)
}
