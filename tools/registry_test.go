package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeTool is a configurable tool for registry tests.
type fakeTool struct {
	name   string
	params string
	flags  Flags
	run    func(args map[string]any) Result
}

func (f fakeTool) Name() string        { return f.name }
func (f fakeTool) Description() string { return "fake " + f.name }
func (f fakeTool) Parameters() json.RawMessage {
	if f.params == "" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return json.RawMessage(f.params)
}
func (f fakeTool) Flags() Flags { return f.flags }
func (f fakeTool) Run(_ context.Context, _ Env, args map[string]any) Result {
	if f.run == nil {
		return TextResult("ok")
	}
	return f.run(args)
}

const coerceSchema = `{
  "type": "object",
  "properties": {
    "n": {"type": "integer", "minimum": 0},
    "f": {"type": "number"},
    "b": {"type": "boolean"},
    "s": {"type": "string"},
    "arr": {"type": "array", "items": {"type": "integer"}},
    "obj": {"type": "object", "properties": {"k": {"type": "integer"}}, "additionalProperties": false},
    "opt": {"type": ["integer", "null"]}
  },
  "additionalProperties": false
}`

// echoRegistry registers "echo", which stores the args it was called with.
func echoRegistry(t *testing.T) (*Registry, *map[string]any) {
	t.Helper()
	var got map[string]any
	r := NewRegistry()
	r.Register(fakeTool{name: "echo", params: coerceSchema, run: func(args map[string]any) Result {
		got = args
		return TextResult("done")
	}})
	return r, &got
}

func TestFlagsConcurrencySafe(t *testing.T) {
	for _, tc := range []struct {
		flags Flags
		want  bool
	}{
		{Flags{}, false},
		{Flags{ReadOnly: true}, true},
		{Flags{ReadOnly: true, Exclusive: true}, false},
		{Flags{SideEffects: true}, false},
		{Flags{Exclusive: true}, false},
	} {
		require.Equal(t, tc.want, tc.flags.ConcurrencySafe(), "%+v", tc.flags)
	}
}

func TestRegisterDuplicatePanics(t *testing.T) {
	r := NewRegistry()
	r.Register(fakeTool{name: "a"})
	require.Panics(t, func() { r.Register(fakeTool{name: "a"}) })
	require.ErrorContains(t, r.TryRegister(fakeTool{name: "a"}), "duplicate")
}

func TestTryRegisterRejectsBadSchemas(t *testing.T) {
	r := NewRegistry()
	require.Error(t, r.TryRegister(fakeTool{name: "bad", params: `{"type":"string"}`}))
	require.Error(t, r.TryRegister(fakeTool{name: "bad", params: `[1]`}))
	require.Error(t, r.TryRegister(fakeTool{name: "bad", params: `{"type":"object","properties":{"x":{"type":42}}}`}))
	require.Error(t, r.TryRegister(fakeTool{name: ""}))
	require.Empty(t, r.Names())
}

func TestDefinitionsSortedBuiltinsThenExternal(t *testing.T) {
	r := NewRegistry()
	r.Register(fakeTool{name: "mcp_b_x"}, External())
	r.Register(fakeTool{name: "zeta"})
	r.Register(fakeTool{name: "mcp_a_y"}, External())
	r.Register(fakeTool{name: "alpha"})
	r.Register(fakeTool{name: "mid"})
	want := []string{"alpha", "mid", "zeta", "mcp_a_y", "mcp_b_x"}
	require.Equal(t, want, r.Names())
	defs := r.Definitions()
	require.Len(t, defs, len(want))
	for i, d := range defs {
		require.Equal(t, want[i], d.Name)
		require.Equal(t, "fake "+want[i], d.Description)
		require.JSONEq(t, `{"type":"object","properties":{}}`, string(d.Parameters))
	}
	r.Unregister("mid")
	require.Equal(t, []string{"alpha", "zeta", "mcp_a_y", "mcp_b_x"}, r.Names())
	tool, ok := r.Get("zeta")
	require.True(t, ok)
	require.Equal(t, "zeta", tool.Name())
	_, ok = r.Get("mid")
	require.False(t, ok)
}

func TestExecuteUnknownTool(t *testing.T) {
	r := NewRegistry()
	RegisterFilesystem(r)
	for _, tc := range []struct {
		name    string
		suggest string // "" means no suggestion
	}{
		{"readFile", "read_file"},
		{"ReadFile", "read_file"},
		{"read-file", "read_file"},
		{"READ_FILE", "read_file"},
		{"read_file_tool", "read_file"},
		{"file_read", "read_file"},
		{"write_fil", "write_file"},
		{"listdir", "list_dir"},
		{"exec", ""},
		{"completely_unrelated_name", ""},
		{"", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := r.Execute(context.Background(), Env{}, tc.name, `{}`)
			require.True(t, res.IsError)
			require.True(t, strings.HasPrefix(res.Text, "Error: Tool '"+tc.name+"' not found."), res.Text)
			if tc.suggest == "" {
				require.NotContains(t, res.Text, "Did you mean")
			} else {
				require.Contains(t, res.Text, "Did you mean '"+tc.suggest+"'?")
			}
			require.Contains(t, res.Text, "Available: edit_file, list_dir, read_file, write_file")
			require.True(t, strings.HasSuffix(res.Text, errorHint))
		})
	}
}

func TestExecuteInvalidArguments(t *testing.T) {
	r, _ := echoRegistry(t)
	r.Register(fakeTool{name: "req", params: `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`})
	for _, tc := range []struct {
		tool, args string
		want       []string
	}{
		{"echo", `{"n":`, []string{"Invalid parameters for tool 'echo':", "unexpected"}},
		{"echo", `{"n":1} trailing`, []string{"Invalid parameters for tool 'echo':"}},
		{"echo", `[1,2]`, []string{"parameters must be a JSON object, got array"}},
		{"echo", `42`, []string{"parameters must be a JSON object, got number"}},
		{"echo", `{"n":"abc"}`, []string{"parameter 'n'", "want integer"}},
		{"echo", `{"n":-1}`, []string{"parameter 'n'", "minimum"}},
		{"echo", `{"n":1.5}`, []string{"parameter 'n'", "want integer"}},
		{"echo", `{"b":"maybe"}`, []string{"parameter 'b'", "want boolean"}},
		{"echo", `{"arr":[1,"x"]}`, []string{"parameter 'arr[1]'"}},
		{"echo", `{"obj":{"k":"z"}}`, []string{"parameter 'obj.k'"}},
		{"echo", `{"obj":{"other":1}}`, []string{"parameter 'obj'", "additional properties 'other'"}},
		{"echo", `{"bogus":1}`, []string{"additional properties 'bogus' not allowed"}},
		{"req", `{}`, []string{"Invalid parameters for tool 'req':", "missing property 'path'"}},
		{"req", `{"path":null}`, []string{"parameter 'path'", "want string"}},
	} {
		t.Run(tc.args, func(t *testing.T) {
			res := r.Execute(context.Background(), Env{}, tc.tool, tc.args)
			require.True(t, res.IsError, res.Text)
			require.True(t, strings.HasPrefix(res.Text, "Error: Invalid parameters for tool '"+tc.tool+"': "), res.Text)
			for _, w := range tc.want {
				require.Contains(t, res.Text, w)
			}
			require.True(t, strings.HasSuffix(res.Text, errorHint))
		})
	}
}

func TestExecuteCoercesArguments(t *testing.T) {
	r, got := echoRegistry(t)
	for _, tc := range []struct {
		args string
		want map[string]any
	}{
		{``, map[string]any{}},
		{`null`, map[string]any{}},
		{`  `, map[string]any{}},
		{`{"n":"5"}`, map[string]any{"n": int64(5)}},
		{`{"n":" 7 "}`, map[string]any{"n": int64(7)}},
		{`{"n":5.0}`, map[string]any{"n": int64(5)}},
		{`{"n":5}`, map[string]any{"n": int64(5)}},
		{`{"f":"2.5"}`, map[string]any{"f": 2.5}},
		{`{"b":"true"}`, map[string]any{"b": true}},
		{`{"b":"False"}`, map[string]any{"b": false}},
		{`{"b":"yes"}`, map[string]any{"b": true}},
		{`{"s":5}`, map[string]any{"s": "5"}},
		{`{"s":true}`, map[string]any{"s": "true"}},
		{`{"arr":"[1, \"2\"]"}`, map[string]any{"arr": []any{int64(1), int64(2)}}},
		{`{"obj":"{\"k\":\"3\"}"}`, map[string]any{"obj": map[string]any{"k": int64(3)}}},
		{`{"opt":"4"}`, map[string]any{"opt": int64(4)}},
		{`{"opt":null}`, map[string]any{"opt": nil}},
		{`"{\"n\":\"6\"}"`, map[string]any{"n": int64(6)}},
		{`{"arguments":{"n":"8"}}`, map[string]any{"n": int64(8)}},
		{`{"arguments":"{\"b\":\"1\"}"}`, map[string]any{"b": true}},
	} {
		t.Run(tc.args, func(t *testing.T) {
			*got = nil
			res := r.Execute(context.Background(), Env{}, "echo", tc.args)
			require.False(t, res.IsError, res.Text)
			require.Equal(t, "done", res.Text)
			require.Equal(t, tc.want, *got)
		})
	}
}

func TestExecuteResultShaping(t *testing.T) {
	r := NewRegistry()
	r.Register(fakeTool{name: "fails", run: func(map[string]any) Result { return ErrorResult("disk on fire") }})
	r.Register(fakeTool{name: "noop", run: func(map[string]any) Result { return TextResult(" \n") }})
	r.Register(fakeTool{name: "silent_fail", run: func(map[string]any) Result { return Result{IsError: true} }})
	r.Register(fakeTool{name: "boom", run: func(map[string]any) Result { panic("kaboom") }})
	r.Register(fakeTool{name: "boom_err", run: func(map[string]any) Result { panic(errors.New("bad state")) }})
	r.Register(fakeTool{name: "boom_index", run: func(map[string]any) Result {
		var s []int
		_ = s[3]
		return Result{}
	}})
	ctx := context.Background()

	res := r.Execute(ctx, Env{}, "fails", "{}")
	require.Equal(t, Result{Text: "Error: disk on fire" + errorHint, IsError: true}, res)

	res = r.Execute(ctx, Env{}, "noop", "{}")
	require.Equal(t, Result{Text: "(noop completed with no output)"}, res)

	res = r.Execute(ctx, Env{}, "silent_fail", "{}")
	require.True(t, res.IsError)
	require.Equal(t, "Error: silent_fail failed without a message"+errorHint, res.Text)

	res = r.Execute(ctx, Env{}, "boom", "{}")
	require.Equal(t, Result{Text: "Error: panic: kaboom" + errorHint, IsError: true}, res)

	res = r.Execute(ctx, Env{}, "boom_err", "{}")
	require.Equal(t, Result{Text: "Error: errorString: bad state" + errorHint, IsError: true}, res)

	res = r.Execute(ctx, Env{}, "boom_index", "{}")
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "index out of range")
	require.True(t, strings.HasPrefix(res.Text, "Error: "))
}

func TestExecuteCancelledContextDoesNotRun(t *testing.T) {
	ran := false
	r := NewRegistry()
	r.Register(fakeTool{name: "t", run: func(map[string]any) Result { ran = true; return TextResult("x") }})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := r.Execute(ctx, Env{}, "t", "{}")
	require.True(t, res.IsError)
	require.False(t, ran)
}

func TestRegistryConcurrentUse(t *testing.T) {
	r := NewRegistry()
	RegisterFilesystem(r)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r.Register(fakeTool{name: "mcp_s_t" + string(rune('a'+i))}, External())
		}()
		go func() {
			defer wg.Done()
			_ = r.Definitions()
			_ = r.Execute(context.Background(), Env{}, "readFile", "{}")
		}()
	}
	wg.Wait()
	require.Len(t, r.Names(), 12)
}
