package session

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The copy a reader gets equals the JSON round trip it replaced, and shares nothing with the original.
func TestCopyMetadataEqualsRoundTrip(t *testing.T) {
	cases := []map[string]any{
		{},
		{"a": "x", "n": 1.5, "b": true, "z": nil, "nested": map[string]any{"list": []any{1.0, "two", map[string]any{"k": false}}}},
		{"_last_summary": map[string]any{"text": "t", "cursor": 3, "at": "now"}}, // an int set by code becomes float64
		{"bad": "\xff"},       // invalid UTF-8 is replaced
		{"nan": math.NaN()},   // does not encode: the round trip keeps nothing
		{"list": []int{1, 2}}, // a typed slice
		{"usage": map[string]any{"prompt": 10.0, "completion": 2.0}},
	}
	for _, m := range cases {
		want := map[string]any{}
		if raw, err := json.Marshal(m); err == nil {
			require.NoError(t, json.Unmarshal(raw, &want))
		}
		require.Equal(t, want, copyMetadata(m), "%#v", m)
	}
	orig := map[string]any{"nested": map[string]any{"k": "v"}, "list": []any{"a"}}
	c := copyMetadata(orig)
	c["nested"].(map[string]any)["k"] = "changed"
	c["list"].([]any)[0] = "changed"
	require.Equal(t, "v", orig["nested"].(map[string]any)["k"], "maps are copied")
	require.Equal(t, "a", orig["list"].([]any)[0], "slices are copied")
}

func BenchmarkCopyMetadata(b *testing.B) {
	m := map[string]any{"_last_summary": map[string]any{"text": "a summary of some length", "cursor": 12.0, "at": "2026-12-06T12:00:00"},
		"usage": map[string]any{"prompt": 1234.0, "completion": 56.0, "turns": 75.0}, "model": "test-model"}
	for b.Loop() {
		copyMetadata(m)
	}
}
