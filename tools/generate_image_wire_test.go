package tools

import (
	"encoding/base64"
	"encoding/json"
	"image/color"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Fakes of nanobot's native image provider APIs at the wire: each checks the
// request as the real API reads it and answers in the real API's shape.

// imageWire serves one provider's API on 127.0.0.1; handle returns the JSON
// answer, or an error status and body.
type imageWire struct {
	srv    *httptest.Server
	bodies []map[string]any
}

func startImageWire(t *testing.T, handle func(r *http.Request, body map[string]any) (int, any)) *imageWire {
	t.Helper()
	w := &imageWire{}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if r.Method == http.MethodPost {
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				http.Error(rw, "body is not JSON: "+err.Error(), http.StatusBadRequest)
				return
			}
			w.bodies = append(w.bodies, body)
		}
		status, answer := handle(r, body)
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(status)
		if s, ok := answer.(string); ok {
			_, _ = rw.Write([]byte(s))
			return
		}
		_ = json.NewEncoder(rw).Encode(answer)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

// wireImageTool is generate_image over provider at base, with nanobot's defaults.
func wireImageTool(provider, model, key, base string) *GenerateImageTool {
	return NewGenerateImage(ImageGenOptions{Provider: provider, Model: model, APIKey: key, APIBase: base,
		ExtraHeaders: map[string]string{"X-Test": "1"}, DefaultAspectRatio: "1:1", DefaultImageSize: "1K",
		MaxImagesPerTurn: 4, SaveDir: "generated"}, nil)
}

// requireSavedImage checks the call produced exactly want, saved in the workspace.
func requireSavedImage(t *testing.T, res Result, out imageResult, want []byte) {
	t.Helper()
	require.False(t, res.IsError, res.Text)
	require.Len(t, out.Artifacts, 1)
	saved, err := os.ReadFile(out.Artifacts[0].Path)
	require.NoError(t, err)
	require.Equal(t, want, saved)
}

// workspaceRef writes a reference image into env's workspace and returns its name.
func workspaceRef(t *testing.T, env Env, pic []byte) string {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(env.Workspace, "ref.png"), pic, 0o644))
	return "ref.png"
}

func b64(raw []byte) string { return base64.StdEncoding.EncodeToString(raw) }

func TestGenerateImageGeminiFlashWithReference(t *testing.T) {
	pic := testPNG(t, color.RGBA{R: 10, G: 20, B: 30, A: 255})
	wire := startImageWire(t, func(r *http.Request, _ map[string]any) (int, any) {
		if r.URL.Path != "/v1beta/models/gemini-2.5-flash-image:generateContent" || r.Header.Get("x-goog-api-key") != "AIza-test" ||
			r.Header.Get("Authorization") != "" || r.Header.Get("X-Test") != "1" {
			return http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": 401, "message": "wrong path or key", "status": "UNAUTHENTICATED"}}
		}
		return http.StatusOK, map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{
			map[string]any{"text": "here is your image"},
			map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": b64(pic)}}}}}}}
	})
	env := imageEnv(t)
	ref := testPNG(t, color.Black)
	tool := wireImageTool("gemini", "gemini-2.5-flash-image", "AIza-test", wire.srv.URL+"/v1beta/")
	res, out := runGenerateImage(t, tool, env, map[string]any{"prompt": "edit this", "reference_images": []any{workspaceRef(t, env, ref)}})
	requireSavedImage(t, res, out, pic)
	require.Equal(t, map[string]any{
		"contents": []any{map[string]any{"role": "user", "parts": []any{
			map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": b64(ref)}},
			map[string]any{"text": "edit this"}}}},
		"generationConfig": map[string]any{"responseModalities": []any{"TEXT", "IMAGE"}},
	}, wire.bodies[0])
}

func TestGenerateImageGeminiImagen(t *testing.T) {
	pic := testPNG(t, color.RGBA{G: 99, A: 255})
	wire := startImageWire(t, func(r *http.Request, _ map[string]any) (int, any) {
		if r.URL.Path != "/v1beta/models/imagen-4.0-generate-001:predict" || r.Header.Get("x-goog-api-key") != "AIza-test" {
			return http.StatusNotFound, map[string]any{"error": map[string]any{"code": 404, "message": "not found"}}
		}
		return http.StatusOK, map[string]any{"predictions": []any{map[string]any{"bytesBase64Encoded": b64(pic), "mimeType": "image/png"}}}
	})
	tool := wireImageTool("gemini", "imagen-4.0-generate-001", "AIza-test", wire.srv.URL+"/v1beta")
	env := imageEnv(t)
	res, out := runGenerateImage(t, tool, env, map[string]any{"prompt": "a sunset", "aspect_ratio": "16:9"})
	requireSavedImage(t, res, out, pic)
	require.Equal(t, map[string]any{"instances": []any{map[string]any{"prompt": "a sunset"}},
		"parameters": map[string]any{"sampleCount": float64(1), "aspectRatio": "16:9"}}, wire.bodies[0])

	res, _ = runGenerateImage(t, tool, env, map[string]any{"prompt": "a sunset", "aspect_ratio": "21:9"})
	require.False(t, res.IsError, res.Text)
	require.Equal(t, map[string]any{"sampleCount": float64(1)}, wire.bodies[1]["parameters"], "Imagen lacks 21:9: its default")
}

func TestGenerateImageGeminiErrors(t *testing.T) {
	wire := startImageWire(t, func(r *http.Request, _ map[string]any) (int, any) {
		if r.URL.Path == "/v1beta/models/imagen-4.0-generate-001:predict" {
			return http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}}
		}
		return http.StatusOK, map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"parts": []any{map[string]any{"text": "sorry"}}}}}}
	})
	res, _ := runGenerateImage(t, wireImageTool("gemini", "imagen-4.0-generate-001", "bad", wire.srv.URL+"/v1beta"), imageEnv(t), map[string]any{"prompt": "p"})
	require.True(t, res.IsError)
	require.Equal(t, "Error: Gemini Imagen generation failed (HTTP 400): API key not valid. Please pass a valid API key.", res.Text)

	res, _ = runGenerateImage(t, wireImageTool("gemini", "gemini-2.5-flash-image", "k", wire.srv.URL+"/v1beta"), imageEnv(t), map[string]any{"prompt": "p"})
	require.Equal(t, "Error: gemini returned no images for this request", res.Text)

	res, _ = runGenerateImage(t, wireImageTool("gemini", "gemini-2.5-flash-image", "", wire.srv.URL+"/v1beta"), imageEnv(t), map[string]any{"prompt": "p"})
	require.Equal(t, "Error: Gemini API key is not configured. Set providers.gemini.apiKey.", res.Text)
}

func TestGenerateImageOllama(t *testing.T) {
	pic := testPNG(t, color.RGBA{R: 5, A: 255})
	wire := startImageWire(t, func(r *http.Request, _ map[string]any) (int, any) {
		if r.URL.Path != "/api/generate" || r.Header.Get("Authorization") != "Bearer ollama-test" {
			return http.StatusNotFound, map[string]any{"error": "model 'x/z-image-turbo' not found"}
		}
		return http.StatusOK, map[string]any{"model": "x/z-image-turbo", "created_at": "2025-01-01T00:00:00Z", "response": "",
			"done": true, "done_reason": "stop", "image": b64(pic)}
	})
	tool := NewGenerateImage(ImageGenOptions{Provider: "ollama", Model: "x/z-image-turbo", APIKey: "ollama-test",
		APIBase: wire.srv.URL + "/v1", ExtraBody: map[string]any{"seed": 123, "stream": true},
		DefaultAspectRatio: "16:9", DefaultImageSize: "1K", MaxImagesPerTurn: 1, SaveDir: "generated"}, nil)
	res, out := runGenerateImage(t, tool, imageEnv(t), map[string]any{"prompt": "a sunset"})
	requireSavedImage(t, res, out, pic)
	require.Equal(t, map[string]any{"model": "x/z-image-turbo", "prompt": "a sunset", "width": float64(1024), "height": float64(576),
		"steps": float64(0), "seed": float64(123), "stream": false}, wire.bodies[0], "chat's /v1 base becomes /api; stream stays off")

	res, _ = runGenerateImage(t, wireImageTool("ollama", "missing", "", wire.srv.URL+"/api"), imageEnv(t), map[string]any{"prompt": "p"})
	require.Equal(t, "Error: Ollama image generation failed (HTTP 404): model 'x/z-image-turbo' not found", res.Text)
}

func TestOllamaDimensions(t *testing.T) {
	for _, tc := range []struct {
		aspect, size string
		w, h         int
	}{
		{"", "", 1024, 1024}, {"16:9", "1K", 1024, 576}, {"9:16", "2K", 1152, 2048}, {"21:9", "", 1024, 440},
		{"16:9", "640x480", 640, 480}, {"16:9", "big", 1024, 576}, {"wide", "4K", 4096, 4096}, {"0:1", "", 1024, 1024},
	} {
		w, h := ollamaDimensions(tc.aspect, tc.size)
		require.Equal(t, [2]int{tc.w, tc.h}, [2]int{w, h}, "%s %s", tc.aspect, tc.size)
	}
}

func TestGenerateImageAIHubMix(t *testing.T) {
	pic := testPNG(t, color.RGBA{G: 5, A: 255})
	var wire *imageWire
	wire = startImageWire(t, func(r *http.Request, body map[string]any) (int, any) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/cdn/image.png":
			return http.StatusOK, string(pic)
		case r.Header.Get("Authorization") != "Bearer sk-ahm" || r.Header.Get("X-Test") != "1":
			return http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "Invalid token", "type": "aihubmix_error"}}
		case r.URL.Path == "/v1/models/openai/gpt-image-2-free/predictions":
			return http.StatusOK, map[string]any{"output": map[string]any{"b64_json": []any{map[string]any{"bytesBase64": b64(pic)}}}}
		case r.URL.Path == "/v1/models/doubao/seedream-4/predictions":
			return http.StatusOK, map[string]any{"data": []any{map[string]any{"url": wire.srv.URL + "/cdn/image.png"}}}
		}
		return http.StatusNotFound, map[string]any{"error": map[string]any{"message": "no model " + r.URL.Path}}
	})
	env := imageEnv(t)
	ref := testPNG(t, color.White)
	res, out := runGenerateImage(t, wireImageTool("aihubmix", "gpt-image-2-free", "sk-ahm", wire.srv.URL+"/v1"), env,
		map[string]any{"prompt": "edit this", "aspect_ratio": "4:3", "reference_images": []any{workspaceRef(t, env, ref)}})
	requireSavedImage(t, res, out, pic)
	require.Equal(t, map[string]any{"input": map[string]any{"prompt": "edit this", "n": float64(1), "size": "1536x1024",
		"image": "data:image/png;base64," + b64(ref)}}, wire.bodies[0], "the vendor is added to OpenAI's model; one reference is a string")

	res, out = runGenerateImage(t, wireImageTool("aihubmix", "doubao/seedream-4", "sk-ahm", wire.srv.URL+"/v1"), env,
		map[string]any{"prompt": "p", "aspect_ratio": "21:9", "image_size": "2K"})
	requireSavedImage(t, res, out, pic)
	require.Equal(t, "auto", wire.bodies[1]["input"].(map[string]any)["size"], "no WxH and a ratio it lacks: auto")

	res, _ = runGenerateImage(t, wireImageTool("aihubmix", "gpt-image-2-free", "bad", wire.srv.URL+"/v1"), env, map[string]any{"prompt": "p"})
	require.Equal(t, `Error: AIHubMix image generation failed: {"error":{"message":"Invalid token","type":"aihubmix_error"}}`+"\n", res.Text)
}
