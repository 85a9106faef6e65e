package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// callState carries one Chat call's wire adjustments into the HTTPDoer and
// brings back what go-openai does not expose (status, headers, raw body).
type callState struct {
	// set is written over top-level body fields; a nil value removes the field.
	set map[string]any
	// extra is deep-merged into the body last (Request.ExtraBody).
	extra map[string]any
	// idle, when set, is kicked by every byte of the response body.
	idle *idleWatch
	// keepBody keeps a copy of a successful body to read fields go-openai drops.
	keepBody bool

	status int
	header http.Header
	body   bytes.Buffer
}

type callStateKey struct{}

func withCallState(ctx context.Context, st *callState) context.Context {
	return context.WithValue(ctx, callStateKey{}, st)
}

func callStateFrom(ctx context.Context) *callState {
	st, _ := ctx.Value(callStateKey{}).(*callState)
	return st
}

// maxKeptBody bounds the copy kept for re-reading a non-streamed answer.
const maxKeptBody = 32 << 20

// doer is the HTTPDoer given to go-openai: it shapes the body (go-openai's
// struct cannot send temperature 0 or extra fields) and captures the response
// metadata its APIError lacks.
type doer struct {
	next    openai.HTTPDoer
	headers map[string]string
	query   map[string]string
}

func (d *doer) Do(req *http.Request) (*http.Response, error) {
	st := callStateFrom(req.Context())
	req = req.Clone(req.Context())
	for k, v := range d.headers {
		req.Header.Set(k, v)
	}
	if len(d.query) > 0 {
		q := req.URL.Query()
		for k, v := range d.query {
			q.Set(k, v)
		}
		req.URL.RawQuery = q.Encode()
	}
	if st != nil && req.Body != nil && (len(st.set) > 0 || len(st.extra) > 0) {
		if err := rewriteBody(req, st.set, st.extra); err != nil {
			return nil, fmt.Errorf("shape request body: %w", err)
		}
	}
	resp, err := d.next.Do(req)
	if err != nil || st == nil {
		return resp, err
	}
	st.status = resp.StatusCode
	st.header = resp.Header.Clone()
	if st.idle != nil {
		resp.Body = &idleBody{ReadCloser: resp.Body, watch: st.idle}
	}
	if st.keepBody && resp.StatusCode < 300 {
		resp.Body = &keptBody{ReadCloser: resp.Body, into: &st.body}
	}
	return resp, nil
}

func rewriteBody(req *http.Request, set, extra map[string]any) error {
	raw, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	top, err := splitObject(raw)
	if err != nil {
		return fmt.Errorf("decode body: %w", err)
	}
	for k, v := range set {
		if v == nil {
			delete(top, k)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode %s: %w", k, err)
		}
		top[k] = b
	}
	for k, v := range extra {
		merged, err := mergeField(top[k], v)
		if err != nil {
			return fmt.Errorf("merge extra body %s: %w", k, err)
		}
		top[k] = merged
	}
	out, err := encodeObject(top)
	if err != nil {
		return fmt.Errorf("encode body: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(out))
	req.ContentLength = int64(len(out))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	return nil
}

// splitObject cuts a JSON object into its fields in one pass, each value a slice of raw: the body
// is go-openai's json.Marshal output, and decoding it (json.Unmarshal validates, then decodes: two
// passes over the whole prompt, copying every value) was most of a model call's local cost.
func splitObject(raw []byte) (map[string]json.RawMessage, error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	fields := map[string]json.RawMessage{}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] != '}'; {
		end := valueEnd(raw, i)
		var key string
		if raw[i] != '"' || json.Unmarshal(raw[i:end], &key) != nil {
			return nil, fmt.Errorf("bad field name at byte %d", i)
		}
		if i = skipSpace(raw, end); i >= len(raw) || raw[i] != ':' {
			return nil, fmt.Errorf("no colon after field %q", key)
		}
		i = skipSpace(raw, i+1)
		end = valueEnd(raw, i)
		if end == i {
			return nil, fmt.Errorf("field %q has no value", key)
		}
		fields[key] = raw[i:end]
		if i = skipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	if i >= len(raw) || skipSpace(raw, i+1) != len(raw) {
		return nil, fmt.Errorf("the object is not closed, or something follows it")
	}
	return fields, nil
}

// valueEnd is where the JSON value starting at raw[i] ends: at the comma, colon or closing
// bracket that follows it outside any string, array or object.
func valueEnd(raw []byte, i int) int {
	depth, inString := 0, false
	for ; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString && c == '\\':
			i++
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return trimSpaceEnd(raw, i)
			}
			depth--
		case (c == ',' || c == ':') && depth == 0:
			return trimSpaceEnd(raw, i)
		}
	}
	return trimSpaceEnd(raw, i)
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// trimSpaceEnd moves end back over the whitespace before it.
func trimSpaceEnd(raw []byte, end int) int {
	for end > 0 && (raw[end-1] == ' ' || raw[end-1] == '\t' || raw[end-1] == '\n' || raw[end-1] == '\r') {
		end--
	}
	return end
}

// encodeObject writes fields as one JSON object, keys sorted as json.Marshal sorts a map's, each
// value as it is: they are go-openai's compact output or json.Marshal's, so re-encoding them (a
// second pass over the whole prompt) would give the same bytes.
func encodeObject(fields map[string]json.RawMessage) ([]byte, error) {
	keys := make([]string, 0, len(fields))
	size := 2
	for k, v := range fields {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	slices.Sort(keys)
	out := make([]byte, 0, size)
	out = append(out, '{')
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		name, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		out = append(append(out, name...), ':')
		out = append(out, fields[k]...)
	}
	return append(out, '}'), nil
}

// mergeField deep-merges an extra value into an existing one when both are
// objects (like nanobot's _deep_merge); otherwise the extra value wins.
func mergeField(existing json.RawMessage, extra any) (json.RawMessage, error) {
	override, isMap := extra.(map[string]any)
	if !isMap || len(existing) == 0 {
		return json.Marshal(extra)
	}
	dec := json.NewDecoder(bytes.NewReader(existing))
	dec.UseNumber()
	var base map[string]any
	if err := dec.Decode(&base); err != nil || base == nil {
		return json.Marshal(extra)
	}
	return json.Marshal(deepMerge(base, override))
}

func deepMerge(base, override map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(override))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range override {
		bm, ok1 := out[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = deepMerge(bm, om)
			continue
		}
		out[k] = v
	}
	return out
}

// idleWatch fires once no byte has arrived for d.
type idleWatch struct {
	d time.Duration
	t *time.Timer
}

func newIdleWatch(d time.Duration, fire func()) *idleWatch {
	return &idleWatch{d: d, t: time.AfterFunc(d, fire)}
}

func (w *idleWatch) kick() { w.t.Reset(w.d) }
func (w *idleWatch) stop() { w.t.Stop() }

type idleBody struct {
	io.ReadCloser
	watch *idleWatch
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.watch.kick()
	}
	return n, err
}

type keptBody struct {
	io.ReadCloser
	into *bytes.Buffer
}

func (b *keptBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && b.into.Len()+n <= maxKeptBody {
		b.into.Write(p[:n])
	}
	return n, err
}
