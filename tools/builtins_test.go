package tools

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/cron"
	"github.com/nanobot-durable/nanobot/protocol"
)

// builtinEnv returns a restricted env over a fresh workspace and a registry
// built by RegisterBuiltins with opts.
func builtinEnv(t *testing.T, opts BuiltinOptions) (Env, *Registry) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	r := NewRegistry()
	require.NoError(t, RegisterBuiltins(r, opts))
	return Env{Workspace: ws, RestrictToWorkspace: true, SessionKey: "cli:test", CallID: "call_1"}, r
}

type nopSender struct{}

func (nopSender) SendMessage(context.Context, Env, protocol.Route, string, []string) (bool, error) {
	return false, nil
}

func TestRegisterBuiltins(t *testing.T) {
	files := []string{"apply_patch", "edit_file", "find_files", "grep", "list_dir", "read_file", "write_file"}
	for _, tc := range []struct {
		name string
		opts BuiltinOptions
		want []string
	}{
		{name: "defaults: file tools only", opts: BuiltinOptions{}, want: files},
		{name: "everything", opts: BuiltinOptions{ExecEnabled: true, Exec: DefaultExecOptions(), WebEnabled: true, MessageSender: nopSender{}},
			want: append(append([]string{}, files...), "exec", "message", "web_fetch", "web_search")},
		{name: "files disabled", opts: BuiltinOptions{DisableFiles: true, ExecEnabled: true}, want: []string{"exec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			require.NoError(t, RegisterBuiltins(r, tc.opts))
			require.ElementsMatch(t, tc.want, r.Names())
		})
	}
}

func TestRegisterBuiltinsConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   BuiltinOptions
		errHas string
	}{
		{name: "bad CIDR", opts: BuiltinOptions{SSRFWhitelist: []string{"10.0.0.0/33"}}, errHas: "ssrfWhitelist"},
		{name: "bad deny regex", opts: BuiltinOptions{ExecEnabled: true, Exec: ExecOptions{DenyPatterns: []string{"("}}}, errHas: "denyPatterns"},
		{name: "bad allow regex", opts: BuiltinOptions{ExecEnabled: true, Exec: ExecOptions{AllowPatterns: []string{"[a"}}}, errHas: "allowPatterns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			err := RegisterBuiltins(r, tc.opts)
			require.ErrorContains(t, err, tc.errHas)
			require.Empty(t, r.Names(), "nothing is registered on a config error")
		})
	}
}

func TestRegisterBuiltinsDuplicateRollsBack(t *testing.T) {
	r := NewRegistry()
	RegisterFilesystem(r)
	require.Error(t, RegisterBuiltins(r, BuiltinOptions{}))
	require.ElementsMatch(t, []string{"edit_file", "list_dir", "read_file", "write_file"}, r.Names(),
		"the failed call leaves what was there before")
}

func TestBuiltinFlags(t *testing.T) {
	_, r := builtinEnv(t, BuiltinOptions{ExecEnabled: true, WebEnabled: true, MessageSender: nopSender{}})
	braveReg := NewRegistry()
	require.NoError(t, RegisterBuiltins(braveReg, BuiltinOptions{WebEnabled: true, Web: WebOptions{SearchProvider: "brave", SearchAPIKey: "k"}}))
	brave, _ := braveReg.Get("web_search")
	for _, tc := range []struct {
		tool Tool
		want Flags
	}{
		{mustGet(t, r, "grep"), Flags{ReadOnly: true}},
		{mustGet(t, r, "find_files"), Flags{ReadOnly: true}},
		{mustGet(t, r, "apply_patch"), Flags{SideEffects: true}},
		{mustGet(t, r, "exec"), Flags{Exclusive: true, SideEffects: true}},
		{mustGet(t, r, "web_fetch"), Flags{ReadOnly: true}},
		{mustGet(t, r, "web_search"), Flags{ReadOnly: true, Exclusive: true}},
		{brave, Flags{ReadOnly: true}},
		{mustGet(t, r, "message"), Flags{SideEffects: true}},
	} {
		require.Equal(t, tc.want, tc.tool.Flags(), tc.tool.Name())
	}
}

func mustGet(t *testing.T, r *Registry, name string) Tool {
	t.Helper()
	tool, ok := r.Get(name)
	require.True(t, ok, name)
	return tool
}

type nopGoals struct{}

func (nopGoals) CreateGoal(context.Context, Env, string, string) (string, error) { return "", nil }
func (nopGoals) UpdateGoal(context.Context, Env, string, string, string, string) (string, error) {
	return "", nil
}

type nopCron struct{}

func (nopCron) Add(_ context.Context, j cron.Job) (cron.Job, error) { return j, nil }
func (nopCron) List(context.Context) ([]cron.Job, error)            { return nil, nil }
func (nopCron) Remove(context.Context, string) (string, error)      { return "", nil }

// TestBuiltinSchemasCompile: a built-in's schema is compiled on its first
// call, so a bad one must be caught here, not at registration.
func TestBuiltinSchemasCompile(t *testing.T) {
	r := NewRegistry()
	require.NoError(t, RegisterBuiltins(r, BuiltinOptions{ExecEnabled: true, Exec: DefaultExecOptions(), WebEnabled: true,
		MessageSender: nopSender{}, Spawn: true, Goals: nopGoals{}, Cron: nopCron{}}))
	require.Len(t, r.Names(), 15)
	for _, name := range r.Names() {
		_, err := r.entries[name].schema()
		require.NoError(t, err, name)
	}
}
