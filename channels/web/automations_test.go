package web

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/schedules"
)

// fakeAutomations is the page's view of Temporal's schedules, recording what it is asked to do.
type fakeAutomations struct {
	mu   sync.Mutex
	acts []string
}

func (f *fakeAutomations) List(context.Context) ([]Automation, error) {
	next := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	return []Automation{
		{ID: "heartbeat", Name: "Heartbeat", Kind: schedules.KindHeartbeat, Next: &next, Runs: []AutomationRun{{WorkflowID: "heartbeat-1", RunID: "r1", Result: "Completed"}}},
		{ID: "cron/j1", Name: "water the plants", Kind: schedules.KindCron, Deletable: true, Runs: []AutomationRun{}},
	}, nil
}

func (f *fakeAutomations) Act(_ context.Context, id, action string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acts = append(f.acts, action+" "+id)
	return nil
}

func (f *fakeAutomations) done() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.acts...)
}

// TestSchedulesThroughTheGuard: the schedules page's endpoints list and act
// with the token from the chat's own origin, and refuse a missing token, a
// foreign Host and a cross-origin POST without touching a schedule.
func TestSchedulesThroughTheGuard(t *testing.T) {
	const token = "s3cret"
	c, _, base := startChannelWith(t, func(cfg *config.Config) {
		editBlock(t, cfg, func(b *Config) { b.Token = token })
	})
	fake := &fakeAutomations{}
	require.Equal(t, http.StatusServiceUnavailable, call(t, http.MethodGet, base+"/api/schedules", "", "Authorization", "Bearer "+token).status, "no Temporal: said so")
	c.UseTemporal(nil, "http://ui.test", "default")
	c.UseAutomations(fake)
	_, port, err := net.SplitHostPort(base[len("http://"):])
	require.NoError(t, err)
	auth := []string{"Authorization", "Bearer " + token}

	a := call(t, http.MethodGet, base+"/api/schedules", "", auth...)
	require.Equal(t, http.StatusOK, a.status, a.body)
	require.Contains(t, a.body, `"name":"Heartbeat"`)
	require.Contains(t, a.body, `"inspect":"http://ui.test/namespaces/default/workflows/heartbeat-1/r1/history"`, "each run links to its history")
	require.Contains(t, a.body, `"name":"water the plants"`)

	a = call(t, http.MethodPost, base+"/api/schedule", `{"id":"cron/j1","action":"pause"}`, append(auth, "Origin", "http://127.0.0.1:"+port)...)
	require.Equal(t, http.StatusOK, a.status, a.body)
	require.Equal(t, []string{"pause cron/j1"}, fake.done())

	refused := []struct {
		status int
		header []string
	}{
		{http.StatusUnauthorized, nil},
		{http.StatusMisdirectedRequest, append(auth, "Host", "evil.example:"+port, "Origin", "http://evil.example:"+port)},
		{http.StatusForbidden, append(auth, "Origin", "http://evil.example")},
	}
	for _, r := range refused {
		a = call(t, http.MethodPost, base+"/api/schedule", `{"id":"cron/j1","action":"delete"}`, r.header...)
		require.Equal(t, r.status, a.status, "%v: %s", r.header, a.body)
		a = call(t, http.MethodGet, base+"/api/schedules", "", r.header...)
		require.Equal(t, r.status, a.status, "%v: %s", r.header, a.body)
		require.NotContains(t, a.body, "Heartbeat")
	}
	require.Equal(t, []string{"pause cron/j1"}, fake.done(), "nothing refused reached Temporal")

	require.Equal(t, http.StatusBadRequest, call(t, http.MethodPost, base+"/api/schedule", `{"id":"cron/j1"}`, auth...).status, "no action")
	require.Equal(t, http.StatusMethodNotAllowed, call(t, http.MethodGet, base+"/api/schedule", "", auth...).status)
}

// fakeTurns has one web chat's turn waiting on a request.
type fakeTurns struct{}

func (fakeTurns) Now(context.Context, string) (TurnNow, error) { return TurnNow{}, nil }

func (fakeTurns) Pending(context.Context) ([]PendingApproval, error) {
	return []PendingApproval{{Session: "web:c1", Answerable: true, Request: &approvalView{ID: "a1", Call: "exec rm -rf build"}}}, nil
}

// TestApprovalsThroughTheGuard: the waiting requests of every chat are
// listed with the token, and not without it nor to a foreign Host or Origin.
func TestApprovalsThroughTheGuard(t *testing.T) {
	const token = "s3cret"
	c, _, base := startChannelWith(t, func(cfg *config.Config) {
		editBlock(t, cfg, func(b *Config) { b.Token = token })
	})
	c.UseTemporal(fakeTurns{}, "", "default")
	_, port, err := net.SplitHostPort(base[len("http://"):])
	require.NoError(t, err)
	auth := []string{"Authorization", "Bearer " + token}
	a := call(t, http.MethodGet, base+"/api/approvals", "", auth...)
	require.Equal(t, http.StatusOK, a.status, a.body)
	require.Contains(t, a.body, `"session":"web:c1","answerable":true,"request":{"id":"a1","call":"exec rm -rf build"`)
	for status, header := range map[int][]string{
		http.StatusUnauthorized:       nil,
		http.StatusMisdirectedRequest: append(auth, "Host", "evil.example:"+port, "Origin", "http://evil.example:"+port),
		http.StatusForbidden:          append(auth, "Origin", "http://evil.example"),
	} {
		a = call(t, http.MethodGet, base+"/api/approvals", "", header...)
		require.Equal(t, status, a.status, a.body)
		require.NotContains(t, a.body, "rm -rf")
	}
}

func (fakeTurns) Running(context.Context) ([]RunningSubagent, error) {
	return []RunningSubagent{{ID: "s1", Label: "star counter", Origin: "web:c1", State: "RUN"}}, nil
}

func (fakeTurns) Subagent(_ context.Context, id string) (SubagentView, error) {
	return SubagentView{ID: id, Label: "star counter", State: subagentDone, Result: "There are 42 stars."}, nil
}

// TestConsoleReadsThroughTheGuard: the console's other reads answer with the
// token, and not without it, to a foreign Host, or to another site's page.
func TestConsoleReadsThroughTheGuard(t *testing.T) {
	const token = "s3cret"
	c, _, base := startChannelWith(t, func(cfg *config.Config) {
		editBlock(t, cfg, func(b *Config) { b.Token = token })
	})
	c.UseTemporal(fakeTurns{}, "", "default")
	testenv.WriteFile(t, c.workspace, "media/web-1-1-a.txt", "secret file")
	_, port, err := net.SplitHostPort(base[len("http://"):])
	require.NoError(t, err)
	auth := []string{"Authorization", "Bearer " + token}
	for path, want := range map[string]string{
		"/api/subagents": `"label":"star counter","origin":"web:c1"`, "/api/memory": `"name":"MEMORY.md"`,
		"/api/subagent?id=0a1b2c3d": `"state":"done","result":"There are 42 stars."`,
		"/api/context?chat=c1":      `"budget":`, "/api/media?name=web-1-1-a.txt": "secret file",
	} {
		a := call(t, http.MethodGet, base+path, "", auth...)
		require.Equal(t, http.StatusOK, a.status, path+": "+a.body)
		require.Contains(t, a.body, want, path)
		for status, header := range map[int][]string{
			http.StatusUnauthorized:       nil,
			http.StatusMisdirectedRequest: append(auth, "Host", "evil.example:"+port),
			http.StatusForbidden:          append(auth, "Origin", "http://evil.example"),
		} {
			a = call(t, http.MethodGet, base+path, "", header...)
			require.Equal(t, status, a.status, path)
			require.NotContains(t, a.body, want, path)
		}
	}
	require.Equal(t, http.StatusBadRequest, call(t, http.MethodGet, base+"/api/subagent?id=../turn", "", auth...).status, "only a subagent's id")
}
