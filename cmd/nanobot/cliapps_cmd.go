package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/nanobot-durable/nanobot/cliapps"
)

const cliAppsUsage = `usage: nanobot cli-apps [list | catalog [--refresh] | install NAME | update NAME | uninstall NAME]
  CLI Apps the agent may run with run_cli_app (nanobot's Settings → CLI Apps):
  list       the installed apps (the default)
  catalog    every app of the catalog (CLI-Anything's registries and nanobot-extension's;
             NANOBOT_CLI_APPS_CATALOG=<base URL> reads a mirror instead)
  install    install an app of the catalog (npm, pip into a virtualenv, uv, brew, or one already on PATH)
             and write its skill to the workspace
  update     reinstall an installed app at the catalog's newest version
  uninstall  remove an installed app and its skill`

func (a *app) cliAppsCmd(ctx context.Context, args []string) error {
	fs := a.flags("cli-apps")
	refresh := fs.Bool("refresh", false, "catalog: fetch the registries even when the cache is fresh")
	fs.Usage = func() { fmt.Fprintln(a.stderr, cliAppsUsage) }
	action := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		action, args = args[0], args[1:]
	}
	name := ""
	if action == "install" || action == "update" || action == "uninstall" {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return usageError{fmt.Errorf("cli-apps %s: which app?\n%s", action, cliAppsUsage)}
		}
		name, args = args[0], args[1:]
	}
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if len(fs.Args()) > 0 {
		return usageError{errors.New(cliAppsUsage)}
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	m := cliapps.ForConfig(cfg)
	switch action {
	case "list":
		apps, err := m.InstalledApps()
		if err != nil {
			return err
		}
		if len(apps) == 0 {
			fmt.Fprintln(a.stdout, "No CLI apps installed (nanobot cli-apps catalog lists what can be).")
			return nil
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tVERSION\tENTRY POINT\tHOW\tSOURCE")
		for _, n := range m.InstalledNames() {
			in := apps[n]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n, in.Version, in.EntryPoint, in.Strategy, in.Source)
		}
		return tw.Flush()
	case "catalog":
		apps, updated, err := m.Catalog(ctx, *refresh)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tHOW\tCATEGORY\tDESCRIPTION")
		for _, app := range apps {
			desc := app.Description
			if len(desc) > 70 {
				desc = desc[:67] + "…"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", app.Name, app.Strategy(), app.Category, desc)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if updated != "" {
			fmt.Fprintf(a.stdout, "\n%d apps, catalog updated %s\n", len(apps), updated)
		}
		return nil
	}
	do := map[string]func(context.Context, string) (string, error){
		"install": m.Install, "update": m.Update, "uninstall": m.Uninstall,
	}[action]
	if do == nil {
		return usageError{fmt.Errorf("cli-apps: unknown action %q\n%s", action, cliAppsUsage)}
	}
	msg, err := do(ctx, name)
	if err != nil {
		return fmt.Errorf("cli-apps %s %s: %w", action, name, err)
	}
	fmt.Fprintln(a.stdout, msg)
	return nil
}
