package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/aimocktest"
)

// testPNG is a real 2×2 PNG of one colour.
func testPNG(t *testing.T, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	for x := range 2 {
		for y := range 2 {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

// imageFixture answers a generation or edit whose prompt is prompt with pic.
func imageFixture(prompt string, pic []byte) map[string]any {
	return map[string]any{"match": map[string]any{"userMessage": prompt},
		"response": map[string]any{"image": map[string]any{"b64Json": base64.StdEncoding.EncodeToString(pic)}}}
}

type imageResult struct {
	Artifacts []imageArtifact `json:"artifacts"`
	NextStep  string          `json:"next_step"`
}

func runGenerateImage(t *testing.T, tool *GenerateImageTool, env Env, args map[string]any) (Result, imageResult) {
	t.Helper()
	res := tool.Run(context.Background(), env, args)
	var out imageResult
	if !res.IsError {
		require.NoError(t, json.Unmarshal([]byte(res.Text), &out), res.Text)
	}
	return res, out
}

func imageEnv(t *testing.T) Env {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return Env{Workspace: ws, RestrictToWorkspace: true, SessionKey: "telegram:42", CallID: "c1",
		Route: protocol.Route{Channel: "telegram", ChatID: "42"}}
}

func TestGenerateImageOpenAIGenerationsSavesAndSends(t *testing.T) {
	red := testPNG(t, color.RGBA{R: 255, A: 255})
	srv := aimocktest.Start(t, aimocktest.Fixtures(t, imageFixture("a red square", red)))
	sender := &fakeSender{}
	tool := NewGenerateImage(ImageGenOptions{Provider: "openai", Model: "openai/gpt-image-1", APIKey: "sk-img",
		APIBase: srv.URL() + "/v1", DefaultAspectRatio: "1:1", DefaultImageSize: "1K", MaxImagesPerTurn: 4, SaveDir: "generated"}, sender)
	env := imageEnv(t)

	res, out := runGenerateImage(t, tool, env, map[string]any{"prompt": "a red square", "aspect_ratio": "16:9", "count": float64(2)})
	require.False(t, res.IsError, res.Text)
	require.Len(t, out.Artifacts, 2, "one image per call: asked twice")
	day := filepath.Dir(out.Artifacts[0].Path)
	require.Equal(t, filepath.Join(env.Workspace, "generated"), filepath.Dir(day))
	_, err := time.Parse("2006-01-02", filepath.Base(day))
	require.NoError(t, err, "a folder per day")
	for _, a := range out.Artifacts {
		require.Equal(t, day, filepath.Dir(a.Path))
		require.True(t, strings.HasPrefix(a.ID, "img_") && strings.HasSuffix(a.Path, a.ID+".png"), a.Path)
		got, err := os.ReadFile(a.Path)
		require.NoError(t, err)
		require.Equal(t, red, got)
		var side imageArtifact
		raw, err := os.ReadFile(filepath.Join(day, a.ID+".json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &side))
		require.Equal(t, a, side)
		require.Equal(t, "openai", side.Provider)
	}
	require.Len(t, sender.sent, 1, "both images go to the chat in one message")
	require.Equal(t, env.Route, sender.sent[0].to)
	require.Equal(t, []string{out.Artifacts[0].Path, out.Artifacts[1].Path}, sender.sent[0].media)
	require.Contains(t, out.NextStep, "were sent to the user")

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, "/v1/images/generations", reqs[0].Path)
	require.Equal(t, "Bearer sk-img", reqs[0].Header.Get("Authorization"))
	var body map[string]any
	reqs[0].JSON(t, &body)
	require.Equal(t, map[string]any{"model": "gpt-image-1", "prompt": "a red square", "size": "1536x1024"}, body,
		"the openai/ prefix is dropped, 16:9 is GPT Image's landscape size, no response_format for GPT Image")
}

func TestGenerateImageEditsWithReferenceImages(t *testing.T) {
	blue := testPNG(t, color.RGBA{B: 255, A: 255})
	srv := aimocktest.Start(t, aimocktest.Fixtures(t, imageFixture("make it blue", blue)))
	tool := NewGenerateImage(ImageGenOptions{Provider: "openai", Model: "gpt-image-1", APIKey: "k",
		APIBase: srv.URL() + "/v1", DefaultAspectRatio: "1:1", DefaultImageSize: "1K", MaxImagesPerTurn: 4, SaveDir: "out"}, nil)
	env := imageEnv(t)
	ref := testPNG(t, color.RGBA{G: 255, A: 255})
	require.NoError(t, os.MkdirAll(filepath.Join(env.Workspace, "media"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(env.Workspace, "media", "photo.png"), ref, 0o644))

	res, out := runGenerateImage(t, tool, env, map[string]any{"prompt": "make it blue", "reference_images": []any{"media/photo.png"}, "image_size": "1024x1536"})
	require.False(t, res.IsError, res.Text)
	require.Len(t, out.Artifacts, 1)
	require.Equal(t, []string{filepath.Join(env.Workspace, "media", "photo.png")}, out.Artifacts[0].SourceImages)
	require.Contains(t, out.NextStep, "Call the message tool", "no chat to send to: the model is told to")

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "/v1/images/edits", reqs[0].Path)
	_, params, err := mime.ParseMediaType(reqs[0].Header.Get("Content-Type"))
	require.NoError(t, err)
	form, err := multipart.NewReader(bytes.NewReader(reqs[0].Body), params["boundary"]).ReadForm(1 << 20)
	require.NoError(t, err)
	require.Equal(t, []string{"make it blue"}, form.Value["prompt"])
	require.Equal(t, []string{"1024x1536"}, form.Value["size"])
	require.Len(t, form.File["image[]"], 1)
	f, err := form.File["image[]"][0].Open()
	require.NoError(t, err)
	defer f.Close()
	var sent bytes.Buffer
	_, _ = sent.ReadFrom(f)
	require.Equal(t, ref, sent.Bytes())
}

func TestGenerateImageCustomProvider(t *testing.T) {
	pic := testPNG(t, color.White)
	srv := aimocktest.Start(t, aimocktest.Fixtures(t, imageFixture("a cat", pic)))
	tool := NewGenerateImage(ImageGenOptions{Provider: "custom", Model: "flux", APIBase: srv.URL() + "/v1/",
		DefaultAspectRatio: "1:1", DefaultImageSize: "1K", MaxImagesPerTurn: 1, SaveDir: "generated"}, nil)
	res, out := runGenerateImage(t, tool, imageEnv(t), map[string]any{"prompt": "a cat"})
	require.False(t, res.IsError, res.Text)
	require.Len(t, out.Artifacts, 1)
	var body map[string]any
	srv.Requests()[0].JSON(t, &body)
	require.Equal(t, map[string]any{"model": "flux", "prompt": "a cat", "response_format": "b64_json", "n": float64(1), "size": "1024x1024"}, body)
	require.Empty(t, srv.Requests()[0].Header.Get("Authorization"), "no key: no header")
}

func TestGenerateImageErrorsAreResults(t *testing.T) {
	env := imageEnv(t)
	outside := filepath.Join(t.TempDir(), "x.png")
	require.NoError(t, os.WriteFile(outside, testPNG(t, color.Black), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(env.Workspace, "notes.txt"), []byte("hello"), 0o644))
	base := ImageGenOptions{Provider: "openai", Model: "gpt-image-1", APIKey: "k", APIBase: "http://127.0.0.1:1/v1",
		MaxImagesPerTurn: 2, SaveDir: "generated"}
	for _, tc := range []struct {
		name string
		opts func(*ImageGenOptions)
		args map[string]any
		want string
	}{
		{"count over the limit", nil, map[string]any{"prompt": "p", "count": float64(3)}, "Error: count exceeds tools.imageGeneration.maxImagesPerTurn (2)"},
		{"reference outside the workspace", nil, map[string]any{"prompt": "p", "reference_images": []any{outside}}, "Error: reference_images must be inside the workspace or nanobot media directory"},
		{"reference missing", nil, map[string]any{"prompt": "p", "reference_images": []any{"gone.png"}}, "Error: reference image not found: gone.png"},
		{"reference not an image", nil, map[string]any{"prompt": "p", "reference_images": []any{"notes.txt"}}, "Error: unsupported reference image: notes.txt"},
		{"nanobot provider this build lacks", func(o *ImageGenOptions) { o.Provider = "openai_codex" }, map[string]any{"prompt": "p"}, "Error: image generation provider 'openai_codex' needs nanobot's Codex OAuth login"},
		{"unknown provider", func(o *ImageGenOptions) { o.Provider = "nope" }, map[string]any{"prompt": "p"}, "Error: unsupported image generation provider 'nope'"},
		{"no key", func(o *ImageGenOptions) { o.APIKey = "" }, map[string]any{"prompt": "p"}, "Error: OpenAI API key is not configured. Set providers.openai.apiKey."},
		{"provider unreachable", nil, map[string]any{"prompt": "p"}, "Error: OpenAI image generation request failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			if tc.opts != nil {
				tc.opts(&o)
			}
			res := NewGenerateImage(o, nil).Run(context.Background(), env, tc.args)
			require.True(t, res.IsError, res.Text)
			require.True(t, strings.HasPrefix(res.Text, tc.want), res.Text)
		})
	}
	_, err := os.Stat(filepath.Join(env.Workspace, "generated"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing saved on failure")
}

func TestGenerateImageProviderErrorIsAResult(t *testing.T) {
	srv := aimocktest.Start(t, aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"userMessage": "forbidden", "endpoint": "image"},
			"response": map[string]any{"error": map[string]any{"message": "content policy", "type": "invalid_request_error"}, "status": 400}}))
	tool := NewGenerateImage(ImageGenOptions{Provider: "openai", Model: "dall-e-3", APIKey: "k", APIBase: srv.URL() + "/v1",
		MaxImagesPerTurn: 1, SaveDir: "generated"}, nil)
	res := tool.Run(context.Background(), imageEnv(t), map[string]any{"prompt": "forbidden"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "OpenAI image generation failed (HTTP 400)")
	require.Contains(t, res.Text, "content policy")
}

func TestOpenAIImageSize(t *testing.T) {
	require.Equal(t, "1792x1024", openAIImageSize("dall-e-3", "16:9", "1K"), "an unsupported size falls back to the ratio")
	require.Equal(t, "1024x1792", openAIImageSize("dall-e-3", "1:1", "1024x1792"))
	require.Equal(t, "2048x1152", openAIImageSize("gpt-image-2", "1:1", "2048X1152"), "gpt-image-2 takes any WxH")
	require.Equal(t, "1024x1024", openAIImageSize("gpt-image-1", "21:9", ""))
	require.Equal(t, "1536x1024", customImageSize("4:3", ""))
	require.Equal(t, "2K", customImageSize("1:1", "2K"), "custom passes other hints through")
}

// TestGenerateImageOpenRouter: OpenRouter answers chat completions with the
// image as a data URL in message.images (aimock has no such response; a
// fake at the wire stands in).
func TestGenerateImageOpenRouter(t *testing.T) {
	pic := testPNG(t, color.RGBA{G: 128, A: 255})
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer or-key" {
			http.Error(w, "wrong path or key", http.StatusUnauthorized)
			return
		}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pic)
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
			"role": "assistant", "content": "here", "images": []any{map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}}}}}}})
	}))
	defer srv.Close()
	env := imageEnv(t)
	ref := testPNG(t, color.Black)
	require.NoError(t, os.WriteFile(filepath.Join(env.Workspace, "ref.png"), ref, 0o644))
	tool := NewGenerateImage(ImageGenOptions{Provider: "openrouter", Model: "openai/gpt-5.4-image-2", APIKey: "or-key",
		APIBase: srv.URL + "/api/v1", DefaultAspectRatio: "1:1", DefaultImageSize: "1K", MaxImagesPerTurn: 4, SaveDir: "generated"}, nil)
	res, out := runGenerateImage(t, tool, env, map[string]any{"prompt": "green", "reference_images": []any{"ref.png"}})
	require.False(t, res.IsError, res.Text)
	require.Len(t, out.Artifacts, 1)
	saved, err := os.ReadFile(out.Artifacts[0].Path)
	require.NoError(t, err)
	require.Equal(t, pic, saved)
	require.Equal(t, "openai/gpt-5.4-image-2", got["model"])
	require.Equal(t, []any{"image", "text"}, got["modalities"])
	require.Equal(t, map[string]any{"aspect_ratio": "1:1", "image_size": "1K"}, got["image_config"])
	content := got["messages"].([]any)[0].(map[string]any)["content"].([]any)
	require.Equal(t, map[string]any{"type": "text", "text": "green"}, content[0])
	require.Equal(t, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(ref),
		content[1].(map[string]any)["image_url"].(map[string]any)["url"], "the reference goes inline")
}
