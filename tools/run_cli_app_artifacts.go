package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// What run_cli_app reports as the files an app made (nanobot's lists).
const (
	artifactMaxScan   = 4_000
	artifactMaxReport = 12
)

var artifactExtensions = map[string]bool{
	".csv": true, ".drawio": true, ".gif": true, ".html": true, ".jpeg": true, ".jpg": true, ".json": true,
	".md": true, ".pdf": true, ".png": true, ".svg": true, ".txt": true, ".vsdx": true, ".webp": true, ".xml": true,
}

var inlineArtifactExtensions = map[string]bool{".gif": true, ".jpeg": true, ".jpg": true, ".png": true, ".webp": true}

var artifactIgnoreDirs = map[string]bool{
	".git": true, ".hg": true, ".mypy_cache": true, ".nanobot": true, ".pytest_cache": true, ".ruff_cache": true,
	".venv": true, "__pycache__": true, "build": true, "dist": true, "node_modules": true, "venv": true,
}

type artifactStamp struct {
	modNano int64
	size    int64
}

// artifactSnapshot stamps the artifact-like files under dir (at most artifactMaxScan entries looked at).
func artifactSnapshot(dir string) map[string]artifactStamp {
	stamps := map[string]artifactStamp{}
	scanned := 0
	stack := []string{dir}
	for len(stack) > 0 && scanned < artifactMaxScan {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		entries, err := os.ReadDir(d) // sorted by name
		if err != nil {
			continue
		}
		for _, e := range entries {
			if scanned >= artifactMaxScan {
				break
			}
			scanned++
			p := filepath.Join(d, e.Name())
			if e.IsDir() {
				if !artifactIgnoreDirs[e.Name()] {
					stack = append(stack, p)
				}
				continue
			}
			if !e.Type().IsRegular() || !artifactExtensions[strings.ToLower(filepath.Ext(p))] {
				continue
			}
			if fi, err := e.Info(); err == nil {
				stamps[p] = artifactStamp{fi.ModTime().UnixNano(), fi.Size()}
			}
		}
	}
	return stamps
}

// artifactReport lists the files created or changed since before, newest last (nanobot's text).
func artifactReport(dir string, before map[string]artifactStamp) []string {
	var changed []string
	after := artifactSnapshot(dir)
	for p, st := range after {
		if before[p] != st {
			changed = append(changed, p)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	sort.Slice(changed, func(i, j int) bool {
		a, b := after[changed[i]], after[changed[j]]
		if a.modNano != b.modNano {
			return a.modNano < b.modNano
		}
		return strings.ToLower(filepath.Base(changed[i])) < strings.ToLower(filepath.Base(changed[j]))
	})
	if len(changed) > artifactMaxReport {
		changed = changed[len(changed)-artifactMaxReport:]
	}
	lines := []string{"\nArtifacts created or updated:"}
	image := false
	for _, p := range changed {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			rel = filepath.Base(p)
		}
		ext := strings.ToLower(filepath.Ext(p))
		kind := strings.TrimPrefix(ext, ".")
		if inlineArtifactExtensions[ext] {
			kind, image = "previewable image", true
		}
		lines = append(lines, fmt.Sprintf("- %s (%s, %s)", filepath.ToSlash(rel), kind, artifactSize(after[p].size)))
	}
	if image {
		lines = append(lines, "\nTo show a preview in WebUI, reference a raster artifact with Markdown "+
			"using its workspace-relative path, for example `![diagram](diagram.png)`.")
	}
	return []string{strings.Join(lines, "\n")}
}

func artifactSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}
