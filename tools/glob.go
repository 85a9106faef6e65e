package tools

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// searchWalkMax bounds how many entries one grep/find_files walk visits, so a
// search rooted at / or a huge monorepo cannot run unbounded.
const searchWalkMax = 200_000

// errWalkLimit reports that a search walk stopped at searchWalkMax entries.
var errWalkLimit = errors.New("walk limit reached")

// globPattern is a validated file glob. Patterns without "/" match a file's
// base name anywhere ("*.go"); patterns with "/" match the slash-separated
// path relative to the search root with doublestar's rules, where a "**"
// segment matches any number of directories ("cmd/**/*.go", "**/test_*.py")
// and {a,b} alternatives are allowed.
type globPattern struct {
	pattern string
	byName  bool
}

// compileGlob validates p; Windows separators are accepted as "/" (so a
// backslash never escapes), and a leading "./" or "/" is the search root.
func compileGlob(p string) (*globPattern, error) {
	norm := strings.ReplaceAll(strings.TrimSpace(p), "\\", "/")
	norm = strings.TrimPrefix(norm, "./")
	for strings.Contains(norm, "//") {
		norm = strings.ReplaceAll(norm, "//", "/")
	}
	norm = strings.Trim(norm, "/")
	if norm == "" {
		return nil, errors.New("glob pattern is empty")
	}
	if !doublestar.ValidatePattern(norm) {
		return nil, errors.New("invalid glob pattern " + p + ": syntax error in pattern")
	}
	return &globPattern{pattern: norm, byName: !strings.Contains(norm, "/") && norm != "**"}, nil
}

// match reports whether rel (slash-separated, relative to the search root) matches.
func (g *globPattern) match(rel string) bool {
	if g.byName {
		return doublestar.MatchUnvalidated(g.pattern, path.Base(rel))
	}
	return doublestar.MatchUnvalidated(g.pattern, rel)
}

// walkFiles visits the regular files below root in name order, skipping the
// noise directories list_dir skips and never following symlinks, so a
// search cannot leave the tree it was asked to search.
func walkFiles(ctx context.Context, env Env, root string, visit func(path, rel string, d fs.DirEntry) error) error {
	seen := 0
	pv := newPrivacy(env)
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable subdirectory: search what we can
		}
		if seen++; seen > searchWalkMax {
			return errWalkLimit
		}
		if seen%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if p == root {
			return nil
		}
		if skip, skipDir := pv.skip(p, d.IsDir()); skipDir {
			return filepath.SkipDir
		} else if skip {
			return nil
		}
		if d.IsDir() {
			if listDirIgnored[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return visit(p, filepath.ToSlash(rel), d)
	})
}

// pathDisplayer shows paths relative to the workspace when they lie inside
// it, as nanobot does, else relative to the search root.
func pathDisplayer(env Env, root string) func(p string) string {
	wsResolved := ""
	if ws, err := workspaceDir(env); err == nil {
		if r, err := resolveSymlinks(ws); err == nil {
			wsResolved = r
		}
	}
	return func(p string) string {
		if wsResolved != "" && within(wsResolved, p) {
			if rel, err := filepath.Rel(wsResolved, p); err == nil && rel != "." {
				return filepath.ToSlash(rel)
			}
		}
		if rel, err := filepath.Rel(root, p); err == nil && rel != "." {
			return filepath.ToSlash(rel)
		}
		return filepath.ToSlash(p)
	}
}
