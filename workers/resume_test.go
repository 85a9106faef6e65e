package workers

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	activitypb "go.temporal.io/api/activity/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestIdentityRoundTrips(t *testing.T) {
	id := WorkerIdentity{PID: 4242, Host: "box~4026531836", Start: "abc123"}
	require.Equal(t, "4242@box~4026531836@nanobot-abc123", id.String())
	got, ok := ParseIdentity(id.String())
	require.True(t, ok)
	require.Equal(t, id, got)

	got, ok = ParseIdentity(id.String() + agentIdentityMark)
	require.True(t, ok, "an agent's identity is a process identity too")
	require.Equal(t, id, got)

	self, ok := ParseIdentity(ProcessIdentity())
	require.True(t, ok)
	require.Equal(t, Self(), self)
	require.Equal(t, os.Getpid(), self.PID)
	require.True(t, IsAgentIdentity(AgentIdentity()))
}

func TestIdentityRejectsOtherPollers(t *testing.T) {
	for _, s := range []string{
		"", "4242@box@", // the SDK's default: not ours to judge
		"4242@box@otherapp", // another program on this host
		"x@box@nanobot-1",   // no pid
		"0@box@nanobot-1",   // no process
		"4242@@nanobot-1",   // no host
		"4242",              // no host at all
	} {
		_, ok := ParseIdentity(s)
		require.False(t, ok, "%q", s)
	}
}

func TestOrphanedDecision(t *testing.T) {
	now := time.Now()
	self := WorkerIdentity{PID: 100, Host: "box", Start: "new"}
	attempt := func(identity string) *workflowpb.PendingActivityInfo {
		return &workflowpb.PendingActivityInfo{
			State: enumspb.PENDING_ACTIVITY_STATE_STARTED, LastWorkerIdentity: identity,
			LastStartedTime: timestamppb.New(now.Add(-2 * time.Second)),
			ActivityOptions: &activitypb.ActivityOptions{HeartbeatTimeout: durationpb.New(10 * time.Second)},
		}
	}
	alive := map[int]bool{200: true}
	isAlive := func(pid int) bool { return alive[pid] }
	cases := []struct {
		name     string
		a        *workflowpb.PendingActivityInfo
		orphaned bool
		why      string
	}{
		{"dead process of this host", attempt("300@box@nanobot-x"), true, ""},
		{"our pid reused: the earlier process is gone", attempt("100@box@nanobot-old"), true, ""},
		{"live process of this host", attempt("200@box@nanobot-x"), false, "its process lives"},
		{"this process", attempt(self.String()), false, "this process"},
		{"another host", attempt("300@elsewhere@nanobot-x"), false, "another host"},
		{"not nanobot", attempt("300@box@"), false, "not a nanobot worker"},
	}
	for _, c := range cases {
		got, why := orphaned(c.a, self, isAlive, now)
		require.Equal(t, c.orphaned, got, c.name)
		require.Equal(t, c.why, why, c.name)
	}

	scheduled := attempt("300@box@nanobot-x")
	scheduled.State = enumspb.PENDING_ACTIVITY_STATE_SCHEDULED
	got, why := orphaned(scheduled, self, isAlive, now)
	require.False(t, got)
	require.Equal(t, "not running", why)

	due := attempt("300@box@nanobot-x")
	due.LastStartedTime = timestamppb.New(now.Add(-9500 * time.Millisecond))
	got, why = orphaned(due, self, isAlive, now)
	require.False(t, got, "the server's own timeout is about to fire")
	require.Equal(t, "its heartbeat timeout is due", why)

	due.LastHeartbeatTime = timestamppb.New(now.Add(-time.Second))
	got, _ = orphaned(due, self, isAlive, now)
	require.True(t, got, "a recent heartbeat moves the timeout out")
}

func TestProcessAlive(t *testing.T) {
	require.True(t, processAlive(os.Getpid()))
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	require.True(t, processAlive(pid))
	require.NoError(t, cmd.Process.Kill())
	require.Eventually(t, func() bool { return !processAlive(pid) }, 10*time.Second, 10*time.Millisecond, "a killed child, not yet reaped, is gone")
	_, _ = cmd.Process.Wait()
	require.False(t, processAlive(pid))
}
