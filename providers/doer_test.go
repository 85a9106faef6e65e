package providers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// benchBody is a chat request as go-openai encodes it: a system prompt, a history and tools.
func benchBody(tb testing.TB) []byte {
	var msgs []map[string]any
	msgs = append(msgs, map[string]any{"role": "system", "content": strings.Repeat("You are nanobot <agent> & helper. ", 300)})
	for i := 0; i < 40; i++ {
		msgs = append(msgs, map[string]any{"role": "user", "content": strings.Repeat("a question about the files ", 20)},
			map[string]any{"role": "assistant", "content": strings.Repeat("an answer with \"quotes\" and\nlines ", 20)})
	}
	var tools []map[string]any
	for i := 0; i < 15; i++ {
		tools = append(tools, map[string]any{"type": "function", "function": map[string]any{"name": "tool", "description": strings.Repeat("does a thing ", 10),
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}})
	}
	raw, err := json.Marshal(map[string]any{"model": "m", "messages": msgs, "tools": tools, "stream": true, "max_tokens": 8192})
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

func rewritten(tb testing.TB, body []byte, set, extra map[string]any) []byte {
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if err := rewriteBody(req, set, extra); err != nil {
		tb.Fatal(err)
	}
	out, err := io.ReadAll(req.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkRewriteBody is the body shaping every model call pays (temperature 0, extra fields).
func BenchmarkRewriteBody(b *testing.B) {
	body := benchBody(b)
	set, extra := map[string]any{"temperature": 0, "max_tokens": nil}, map[string]any{"reasoning": map[string]any{"effort": "low"}}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		rewritten(b, body, set, extra)
	}
}

// TestRewriteBodyKeepsJSONMarshalsBytes: the body written field by field is the one
// json.Marshal wrote of the same fields (keys sorted, HTML escaped, compact).
func TestRewriteBodyKeepsJSONMarshalsBytes(t *testing.T) {
	body := benchBody(t)
	set, extra := map[string]any{"temperature": 0, "max_tokens": nil, "note": "<b>&</b>"}, map[string]any{"reasoning": map[string]any{"effort": "low"}}
	got := rewritten(t, body, set, extra)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	top["temperature"], top["note"], top["reasoning"] = json.RawMessage(`0`), json.RawMessage(`"\u003cb\u003e\u0026\u003c/b\u003e"`), json.RawMessage(`{"effort":"low"}`)
	delete(top, "max_tokens")
	want, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("rewritten body differs from json.Marshal's:\n%.300s\n%.300s", got, want)
	}
}

func TestSplitObject(t *testing.T) {
	good := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a" : "x,}]\\\"{" , "b":[1,{"c":"]"}], "d":{"e":[]},"f":null}` + "\n",
		`{"k\"ey":true,"n":-1.5e3}`,
	}
	for _, raw := range good {
		got, err := splitObject([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d fields, want %d", raw, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], bytes.TrimSpace(v)) {
				t.Errorf("%s: field %q is %s, want %s", raw, k, got[k], v)
			}
		}
	}
	for _, raw := range []string{``, `[1]`, `{"a":1`, `{"a":1}x`, `{a:1}`, `{"a"}`, `{"a":}`} {
		if _, err := splitObject([]byte(raw)); err == nil {
			t.Errorf("%q: no error", raw)
		}
	}
}
