package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/nanobot-durable/nanobot/workers"
)

const deploymentUsage = `usage: nanobot deployment [status]         the versions of $NANOBOT_WORKER_DEPLOYMENT, current and draining
       nanobot deployment promote [BUILD]  make BUILD (default: this binary's version) the current version`

// deployment shows and promotes the Worker Versioning deployment named by
// NANOBOT_WORKER_DEPLOYMENT (README "Upgrading", side by side).
func (a *app) deployment(ctx context.Context, args []string) error {
	name := os.Getenv(workers.DeploymentEnv)
	if name == "" {
		return usageError{fmt.Errorf("deployment: %s is not set: this nanobot runs unversioned\n%s", workers.DeploymentEnv, deploymentUsage)}
	}
	sub := "status"
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	c, err := a.connectToInspect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	switch sub {
	case "status":
		if len(args) > 0 {
			return usageError{errors.New(deploymentUsage)}
		}
		versions, err := workers.DescribeDeployment(ctx, c, name)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "BUILD\tCURRENT\tDRAINAGE\tRUNS PINNED AND RUNNING")
		for _, v := range versions {
			current := ""
			if v.Current {
				current = "yes"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\n", v.BuildID, current, v.Drainage, v.Running)
		}
		return w.Flush()
	case "promote":
		build := version
		switch len(args) {
		case 0:
		case 1:
			build = args[0]
		default:
			return usageError{errors.New(deploymentUsage)}
		}
		if err := workers.Promote(ctx, c, name, build, 30*time.Second); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "%s:%s is current: new turns run on it; turns in flight finish on the build that began them\n", name, build)
		return nil
	}
	return usageError{fmt.Errorf("deployment: unknown subcommand %q\n%s", sub, deploymentUsage)}
}
