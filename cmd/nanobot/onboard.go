package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/templates"
)

// onboard writes the config (only when absent) and the workspace files
// (only those missing): running it twice changes nothing.
func (a *app) onboard(ctx context.Context, args []string) error {
	fs := a.flags("onboard")
	workspace := fs.String("workspace", "", "workspace directory (default ~/.nanobot/workspace)")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	path := a.configPath
	if path == "" {
		path = config.DefaultPath()
	}
	path = config.ExpandHome(path)
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	if !cfg.Exists {
		cfg = config.Default()
		if *workspace != "" {
			cfg.Agents.Defaults.Workspace = *workspace
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("create config dir: %w", err)
		}
		if err := config.Save(path, cfg); err != nil {
			return fmt.Errorf("write config %s: %w", path, err)
		}
		fmt.Fprintf(a.stdout, "✓ Created config at %s\n", path)
	} else {
		fmt.Fprintf(a.stdout, "✓ Config exists at %s (left as it is)\n", path)
		if *workspace != "" {
			cfg.Agents.Defaults.Workspace = *workspace
		}
	}
	keyFile := owner.FileIn(config.ConfigDir(path))
	if _, err := owner.Resolve(ctx, keyFile, nil); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "✓ Owner key at %s (only a person answers approvals: the chats and this CLI)\n", keyFile.Path)
	dir := cfg.Agents.Defaults.WorkspacePath()
	created, err := templates.WriteWorkspace(dir)
	if err != nil {
		return fmt.Errorf("write workspace %s: %w", dir, err)
	}
	for _, p := range created {
		fmt.Fprintf(a.stdout, "  created %s\n", p)
	}
	fmt.Fprintf(a.stdout, "✓ Workspace ready at %s\n", dir)
	fmt.Fprintln(a.stdout, "\nNext: set a provider's apiKey in the config (or export OPENAI_API_KEY / OPENAI_BASE_URL),")
	fmt.Fprintln(a.stdout, `then run: nanobot agent -m "Hello!"`)
	return nil
}
