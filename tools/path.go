package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrOutsideWorkspace marks a path refused by tools.restrictToWorkspace, so
// callers can count workspace violations (nanobot escalates after two).
var ErrOutsideWorkspace = errors.New("outside the workspace")

// maxSymlinkHops bounds symlink chains the way the kernel's ELOOP does.
const maxSymlinkHops = 255

// ResolvePath turns a path given by the model into an absolute, clean path
// with every symlink in it resolved: "~" expands to the home directory,
// relative paths are relative to env.Workspace, ".." is applied after the
// symlink before it is followed (as the OS would), and a missing tail is
// kept as is so paths to files not yet created work. With
// env.RestrictToWorkspace the result must lie inside the symlink-resolved
// workspace, otherwise the error wraps ErrOutsideWorkspace; a path in
// env.Private is refused always (ErrPrivatePath).
func ResolvePath(env Env, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("path is empty")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", errors.New("path contains a NUL byte")
	}
	ws, err := workspaceDir(env)
	if err != nil {
		return "", err
	}
	abs, err := expandPath(p, ws)
	if err != nil {
		return "", err
	}
	resolved, err := resolveSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", p, err)
	}
	if err := checkPrivate(env, p, resolved); err != nil {
		return "", err
	}
	if !env.RestrictToWorkspace {
		return resolved, nil
	}
	wsResolved, err := resolveSymlinks(ws)
	if err != nil {
		return "", fmt.Errorf("resolve workspace %s: %w", ws, err)
	}
	if !within(wsResolved, resolved) {
		shown := fmt.Sprintf("%q", p)
		if resolved != filepath.Clean(p) {
			shown += " (resolves to " + resolved + ")"
		}
		return "", fmt.Errorf("path %s is %w %s (tools.restrictToWorkspace is on)", shown, ErrOutsideWorkspace, ws)
	}
	return resolved, nil
}

// workspaceDir returns the absolute workspace, defaulting to the process's
// working directory when the caller did not set one.
func workspaceDir(env Env) (string, error) {
	ws := env.Workspace
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("no workspace set and no working directory: %w", err)
		}
		ws = wd
	}
	if !filepath.IsAbs(ws) {
		abs, err := filepath.Abs(ws)
		if err != nil {
			return "", fmt.Errorf("workspace %q: %w", ws, err)
		}
		ws = abs
	}
	return filepath.Clean(ws), nil
}

// expandPath expands "~" and anchors relative paths at ws; it does not clean,
// because ".." must be applied after symlinks are resolved.
func expandPath(p, ws string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("expand %q: %w", p, err)
		}
		p = home + p[1:]
	}
	if !filepath.IsAbs(p) {
		p = ws + string(filepath.Separator) + p
	}
	return p, nil
}

// resolveSymlinks walks abs one component at a time, following symlinks
// (including dangling ones, whose target still decides where a write lands)
// and applying ".." to the real directory reached so far. Components that
// do not exist are kept literally.
func resolveSymlinks(abs string) (string, error) {
	vol := filepath.VolumeName(abs)
	root := vol + string(filepath.Separator)
	pending := splitPath(abs[len(vol):])
	resolved := root
	hops := 0
	for len(pending) > 0 {
		comp := pending[0]
		pending = pending[1:]
		switch comp {
		case ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		fi, err := os.Lstat(next)
		switch {
		case err != nil && isMissing(err):
			resolved = next
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			resolved = next
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			tvol := filepath.VolumeName(target)
			resolved = tvol + string(filepath.Separator)
			target = target[len(tvol):]
		}
		pending = append(splitPath(target), pending...)
	}
	return resolved, nil
}

// isMissing reports errors meaning "nothing here", including a path that
// runs through a regular file.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}
