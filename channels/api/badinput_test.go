package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadInputRequests: broken, wrongly-typed and huge requests get a 4xx
// with an OpenAI-style error message, and nothing reaches the agent.
func TestBadInputRequests(t *testing.T) {
	c, p, _ := startChannel(t, nil)
	huge := `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 21<<20) + `"}]}`
	for i, body := range []string{
		``, `{`, `null`, `[]`, `"hi"`, `42`, `{}`, `{"messages":null}`, `{"messages":[]}`, `{"messages":"hi"}`,
		`{"messages":[1]}`, `{"messages":[null]}`, `{"messages":[{}]}`, `{"messages":[{"role":"user"}]}`,
		`{"messages":[{"role":"wizard","content":"hi"}]}`, `{"messages":[{"role":"user","content":5}]}`,
		`{"messages":[{"role":"user","content":{"a":1}}]}`, `{"messages":[{"role":"assistant","content":"only me"}]}`,
		`{"messages":[{"role":"system","content":"only system"}]}`, `{"messages":[{"role":"tool","content":"x"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"nope"}]}]}`, `{"messages":[{"role":"user","content":"hi"}],"stream":"yes"}`,
		`{"messages":[{"role":"user","content":"hi"}]} trailing`, `{"messages":[{"role":"user","content":"hi"}],"model":7}`,
		"\xff\xfe", huge,
	} {
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
		if !assert.True(t, rec.Code >= 400 && rec.Code < 500, "case %d (%.60q): status %d %s", i, body, rec.Code, rec.Body.String()) {
			continue
		}
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		assert.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), "case %d: %s", i, rec.Body.String())
		assert.NotEmpty(t, e.Error.Message, "case %d", i)
	}
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, httptest.NewRequest(m, "/v1/chat/completions", nil))
		assert.GreaterOrEqual(t, rec.Code, 400, m)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	require.Empty(t, p.msgs, "a bad request reached the agent")
}
