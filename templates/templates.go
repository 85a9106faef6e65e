// Package templates embeds the workspace files that `nanobot onboard` writes.
package templates

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed all:workspace
var files embed.FS

// Workspace returns the embedded workspace tree.
func Workspace() fs.FS {
	sub, err := fs.Sub(files, "workspace")
	if err != nil {
		panic(err) // the embed pattern above guarantees the folder
	}
	return sub
}

// Read returns one template by its path inside the workspace.
func Read(name string) (string, error) {
	b, err := fs.ReadFile(Workspace(), name)
	if err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	return string(b), nil
}

// WriteWorkspace copies the templates into dir without overwriting files
// the user already has; it returns the paths it created.
func WriteWorkspace(dir string) ([]string, error) {
	var created []string
	err := fs.WalkDir(Workspace(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return fmt.Errorf("create %s: %w", target, err)
			}
			return nil
		}
		if d.Name() == ".keep" {
			return nil
		}
		if _, err := os.Stat(target); err == nil {
			return nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("check %s: %w", target, err)
		}
		data, err := fs.ReadFile(Workspace(), p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", target, err)
		}
		created = append(created, target)
		return nil
	})
	return created, err
}
