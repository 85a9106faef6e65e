package api

import (
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseChatRequestRejects(t *testing.T) {
	cases := []struct {
		name, body string
		status     int
		message    string
	}{
		{"not JSON", `{"messages":`, 400, msgInvalidJSON},
		{"not an object", `[1,2]`, 400, msgInvalidJSON},
		{"no messages", `{"model":"m"}`, 400, msgSingleUser},
		{"empty messages", `{"messages":[]}`, 400, msgSingleUser},
		{"two user messages", `{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`, 400, msgSingleUser},
		{"system then user", `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`, 400, msgSingleUser},
		{"only a system message", `{"messages":[{"role":"system","content":"you are a bot"}]}`, 400, msgSingleUser},
		{"user then assistant", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"earlier"}]}`, 400, msgSingleUser},
		{"message not an object", `{"messages":["hi"]}`, 400, msgSingleUser},
		{"content a number", `{"messages":[{"role":"user","content":5}]}`, 400, msgInvalidFormat},
		{"content null", `{"messages":[{"role":"user","content":null}]}`, 400, msgInvalidFormat},
		{"content missing", `{"messages":[{"role":"user"}]}`, 400, "The user message has no content"},
		{"blank content", `{"messages":[{"role":"user","content":"  "}]}`, 400, "The user message has no content"},
		{"remote image", `{"messages":[{"role":"user","content":[{"type":"text","text":"what is it"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`, 400, msgRemoteImage},
		{"data URL not base64", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,abc"}}]}]}`, 400, "image_url must be a base64 data URL of an image (data:image/png;base64,…)"},
		{"data URL not an image", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:text/plain;base64,aGk="}}]}]}`, 400, "image_url must be a base64 data URL of an image (data:image/png;base64,…)"},
		{"bad base64", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,@@@"}}]}]}`, 400, "image_url holds invalid base64 data"},
		{"wrong model", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, 400, "Only configured model 'test-model' is available"},
		{"model not a string", `{"model":7,"messages":[{"role":"user","content":"hi"}]}`, 400, "model must be a string"},
		{"stream not a boolean", `{"stream":"yes","messages":[{"role":"user","content":"hi"}]}`, 400, "stream must be true or false"},
		{"session_id a number", `{"session_id":5,"messages":[{"role":"user","content":"hi"}]}`, 400, "session_id must be a string of at most 128 characters without control characters"},
		{"session_id with a newline", `{"session_id":"a\nb","messages":[{"role":"user","content":"hi"}]}`, 400, "session_id must be a string of at most 128 characters without control characters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, e := parseChatRequest([]byte(tc.body), "test-model")
			require.NotNil(t, e)
			require.Equal(t, tc.status, e.Status)
			require.Equal(t, tc.message, e.Message)
			require.Equal(t, typeInvalidRequest, e.Type)
		})
	}
}

func TestParseChatRequestAccepts(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 1, 2, 3}
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	cases := []struct {
		name, body string
		want       chatRequest
	}{
		{"plain", `{"messages":[{"role":"user","content":"hello"}]}`, chatRequest{Text: "hello"}},
		{"configured model, stream, session", `{"model":"test-model","stream":true,"session_id":"work","messages":[{"role":"user","content":"hi"}]}`,
			chatRequest{Text: "hi", Stream: true, SessionID: "work"}},
		{"nulls are defaults", `{"model":null,"stream":null,"session_id":null,"messages":[{"role":"user","content":"hi"}]}`, chatRequest{Text: "hi"}},
		{"empty model and session", `{"model":"","session_id":"","messages":[{"role":"user","content":"hi"}]}`, chatRequest{Text: "hi"}},
		{"text parts joined, image decoded", `{"messages":[{"role":"user","content":[{"type":"text","text":"describe"},"junk",{"type":"text","text":"this"},{"type":"image_url","image_url":{"url":"` + dataURL + `"}}]}]}`,
			chatRequest{Text: "describe this", Images: []image{{MIME: "image/png", Data: png}}}},
		{"unknown fields ignored", `{"temperature":0.2,"user":"x","messages":[{"role":"user","content":"hi","name":"ada"}]}`, chatRequest{Text: "hi"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, e := parseChatRequest([]byte(tc.body), "test-model")
			require.Nil(t, e)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestErrorBodyIsOpenAIShape(t *testing.T) {
	e := badRequest(http.StatusBadRequest, msgSingleUser)
	require.JSONEq(t, `{"error":{"message":"Only a single user message is supported","type":"invalid_request_error","code":400}}`, string(e.body()))
	require.Equal(t, "120.0", pySeconds(120))
	require.Equal(t, "0.5", pySeconds(0.5))
}
