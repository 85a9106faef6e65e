package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCoerceArgsLeavesInputUntouched(t *testing.T) {
	cs, err := compileSchema("echo", json.RawMessage(coerceSchema))
	require.NoError(t, err)
	in := map[string]any{"n": "5", "arr": []any{"1"}}
	out := coerceArgs(cs.raw, in)
	require.Equal(t, map[string]any{"n": "5", "arr": []any{"1"}}, in)
	require.Equal(t, map[string]any{"n": int64(5), "arr": []any{int64(1)}}, out)
}

func TestCoerceRefusesNonFiniteNumbers(t *testing.T) {
	cs, err := compileSchema("echo", json.RawMessage(coerceSchema))
	require.NoError(t, err)
	for _, s := range []string{"NaN", "Inf", "-infinity", "1e999"} {
		out := coerceArgs(cs.raw, map[string]any{"f": s, "n": s})
		require.Equal(t, s, out["f"])
		require.Equal(t, s, out["n"])
		require.Error(t, cs.validate(out))
	}
}

func TestSchemaTypeUnion(t *testing.T) {
	require.Equal(t, "integer", schemaType(map[string]any{"type": []any{"null", "integer"}}))
	require.Equal(t, "string", schemaType(map[string]any{"type": "string"}))
	require.Equal(t, "", schemaType(map[string]any{}))
}

func TestParamPath(t *testing.T) {
	require.Equal(t, "a", paramPath([]string{"a"}))
	require.Equal(t, "a.b[0].c", paramPath([]string{"a", "b", "0", "c"}))
}

func TestArgAccessors(t *testing.T) {
	args := map[string]any{"s": "x", "i": int64(3), "f": 2.9, "n": json.Number("12"), "b": true, "big": json.Number("1e30")}
	require.Equal(t, "x", StringArg(args, "s"))
	require.Equal(t, "", StringArg(args, "missing"))
	require.Equal(t, "3", StringArg(args, "i"))
	require.Equal(t, 3, IntArg(args, "i", 0))
	require.Equal(t, 2, IntArg(args, "f", 0))
	require.Equal(t, 12, IntArg(args, "n", 0))
	require.Equal(t, 9, IntArg(args, "missing", 9))
	require.Equal(t, 9, IntArg(args, "s", 9))
	require.Greater(t, IntArg(args, "big", 0), 1<<62)
	require.True(t, BoolArg(args, "b", false))
	require.True(t, BoolArg(args, "missing", true))
}

// FuzzCoerceArgs checks that argument handling never panics, that coercion is
// idempotent, and that whatever validates reaches the tool unchanged.
func FuzzCoerceArgs(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"n":"5"}`, `{"n":5.0}`, `{"n":"1e400"}`, `{"f":"NaN"}`,
		`{"b":"TRUE"}`, `{"s":1.5e3}`, `{"arr":"[1,2,\"3\"]"}`, `{"arr":"[1"}`, `{"obj":"{\"k\":\"1\"}"}`,
		`{"obj":{"k":[1]}}`, `{"opt":null}`, `{"arguments":"{\"n\":\"2\"}"}`, `"{\"b\":\"no\"}"`,
		`{"n":99999999999999999999999}`, `{"f":-0.0}`, `{"x":{"y":[{"z":1e-400}]}}`,
	} {
		f.Add(seed)
	}
	cs, err := compileSchema("echo", json.RawMessage(coerceSchema))
	require.NoError(f, err)
	var got map[string]any
	r := NewRegistry()
	r.Register(fakeTool{name: "echo", params: coerceSchema, run: func(args map[string]any) Result {
		got = args
		return TextResult("done")
	}})

	f.Fuzz(func(t *testing.T, argsJSON string) {
		args, err := parseArgs(argsJSON, cs.raw)
		if err != nil {
			return
		}
		once := coerceArgs(cs.raw, args)
		twice := coerceArgs(cs.raw, once)
		require.Equal(t, once, twice)
		valid := cs.validate(once) == nil

		got = nil
		res := r.Execute(context.Background(), Env{}, "echo", argsJSON)
		require.NotEmpty(t, res.Text)
		if valid {
			require.False(t, res.IsError, res.Text)
			require.Equal(t, once, got)
		} else {
			require.True(t, res.IsError)
			require.True(t, strings.HasPrefix(res.Text, "Error: Invalid parameters for tool 'echo': "), res.Text)
		}
	})
}
