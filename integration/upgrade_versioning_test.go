package integration

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/workers"
)

// TestUpgradeSideBySideWithWorkerVersioning is the other way to upgrade:
// with NANOBOT_WORKER_DEPLOYMENT set, binary A's first start makes its build
// current and its turns are pinned to it. Long turns begin on A (a slow
// tool, an approval waiting, a subagent's held model call); binary B starts
// beside it and `nanobot deployment promote` makes it current; a new turn
// runs on B while A's turns finish on A; once `nanobot deployment` shows no
// run pinned to A, A stops. Every message is answered once, and no workflow
// task failed (a pinned run never replays on the other build).
func TestUpgradeSideBySideWithWorkerVersioning(t *testing.T) {
	first := testenv.NanobotBin(t)
	next := buildUpgradeBinary(t)
	out, err := exec.Command(first, "version").Output()
	require.NoError(t, err)
	buildA := strings.TrimPrefix(strings.TrimSpace(string(out)), "nanobot ")
	require.NotEqual(t, nextVersion, buildA)
	const deployment = "nanobot-upgrade-test"
	r := newUpgradeRig(t, workers.DeploymentEnv+"="+deployment)
	var workerA *exec.Cmd
	workerA, _, r.logs1 = startNanobotFrom(t, first, r.env, "worker")
	ctx := context.Background()
	current := func() string {
		versions, err := workers.DescribeDeployment(ctx, r.dev.Client, deployment)
		if err != nil {
			return ""
		}
		for _, v := range versions {
			if v.Current {
				return v.BuildID
			}
		}
		return ""
	}
	r.await(func() bool { return current() == buildA }, "A's first start never made its build current")
	builtBy := func(session string) string { // the build a session's latest turn is pinned to
		d, err := r.dev.Client.DescribeWorkflowExecution(ctx, protocol.TurnWorkflowID(session), "")
		if err != nil {
			return ""
		}
		return d.GetWorkflowExecutionInfo().GetVersioningInfo().GetDeploymentVersion().GetBuildId()
	}
	deploymentCmd := func(args ...string) string { // `nanobot deployment …` run by B
		cmd := exec.Command(next, append([]string{"deployment"}, args...)...)
		cmd.Env = r.env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}

	req := r.startLongTurns()
	for _, s := range []string{"cli:slow", "cli:approve", "cli:sub"} {
		require.Equal(t, buildA, builtBy(s), "%s runs pinned to A", s)
	}

	// B beside A, made current: new turns go to B.
	_, _, r.logs2 = startNanobotFrom(t, next, r.env, "worker")
	require.Contains(t, deploymentCmd("promote"), deployment+":"+nextVersion+" is current")
	require.Equal(t, nextVersion, current())
	publishTo(t, r.dev, r.route("new"), "n1", "hello")
	r.await(func() bool { return answers(r.ch)["n1"] >= 1 }, "the new turn never replied")
	require.Equal(t, nextVersion, builtBy("cli:new"), "the new turn ran on B")

	// A's turns finish on A.
	r.release()
	r.awaitLongTurnsAnswered(req)
	require.Equal(t, buildA, builtBy("cli:slow"), "the slow turn finished on A")

	// A has drained: `nanobot deployment` says so, and A stops.
	r.await(func() bool {
		n, err := workers.PinnedRunning(ctx, r.dev.Client, deployment, buildA)
		return err == nil && n == 0
	}, "runs pinned to A never finished")
	status := deploymentCmd()
	t.Logf("nanobot deployment:\n%s", status)
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(buildA)+`\s+\S*\s*0$`, status, "A listed with no run pinned and running")
	require.NoError(t, workerA.Process.Signal(syscall.SIGTERM))
	_, _ = workerA.Process.Wait()

	r.requireOnce()
	r.requireNoFailedWorkflowTask(func(*historypb.HistoryEvent) {})
}
