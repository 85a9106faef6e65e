package tools

import (
	"image/color"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// bearerWire answers path with ok when the request carries key as a bearer
// token and extraHeaders, else a 401 in the OpenAI error shape.
func bearerWire(t *testing.T, path, key string, ok func(r *http.Request) (int, any)) *imageWire {
	return startImageWire(t, func(r *http.Request, _ map[string]any) (int, any) {
		if r.URL.Path != path || r.Header.Get("Authorization") != "Bearer "+key || r.Header.Get("X-Test") != "1" {
			return http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "wrong path or key " + r.URL.Path}}
		}
		return ok(r)
	})
}

func TestGenerateImageMiniMaxWithSubjectReference(t *testing.T) {
	pic := testPNG(t, color.RGBA{R: 1, G: 2, B: 3, A: 255})
	wire := bearerWire(t, "/v1/image_generation", "sk-mm", func(*http.Request) (int, any) {
		return http.StatusOK, map[string]any{"id": "0301", "data": map[string]any{"image_base64": []any{b64(pic)}},
			"metadata": map[string]any{"success_count": "1", "failed_count": "0"}, "base_resp": map[string]any{"status_code": 0, "status_msg": "success"}}
	})
	env := imageEnv(t)
	ref := testPNG(t, color.White)
	res, out := runGenerateImage(t, wireImageTool("minimax", "image-01", "sk-mm", wire.srv.URL+"/v1/"), env,
		map[string]any{"prompt": "draw a character", "aspect_ratio": "21:9", "reference_images": []any{workspaceRef(t, env, ref)}})
	requireSavedImage(t, res, out, pic)
	require.Equal(t, map[string]any{"model": "image-01", "prompt": "draw a character", "response_format": "base64", "aspect_ratio": "21:9",
		"subject_reference": []any{map[string]any{"type": "character", "image_file": "data:image/png;base64," + b64(ref)}}}, wire.bodies[0])

	res, _ = runGenerateImage(t, wireImageTool("minimax", "image-01", "sk-mm", wire.srv.URL+"/v1"), env, map[string]any{"prompt": "p", "aspect_ratio": "5:4"})
	require.False(t, res.IsError, res.Text)
	require.Equal(t, "1:1", wire.bodies[1]["aspect_ratio"], "a ratio MiniMax lacks: 1:1")
}

func TestGenerateImageMiniMaxErrors(t *testing.T) {
	wire := bearerWire(t, "/v1/image_generation", "sk-mm", func(*http.Request) (int, any) {
		return http.StatusOK, map[string]any{"data": nil, "base_resp": map[string]any{"status_code": 1026, "status_msg": "input new_sensitive"}}
	})
	res, _ := runGenerateImage(t, wireImageTool("minimax", "image-01", "sk-mm", wire.srv.URL+"/v1"), imageEnv(t), map[string]any{"prompt": "p"})
	require.Equal(t, "Error: minimax returned no images: input new_sensitive", res.Text)
	res, _ = runGenerateImage(t, wireImageTool("minimax", "image-01", "wrong", wire.srv.URL+"/v1"), imageEnv(t), map[string]any{"prompt": "p"})
	require.Equal(t, `Error: MiniMax image generation failed: {"error":{"message":"wrong path or key /v1/image_generation"}}`+"\n", res.Text)
}

func TestGenerateImageStepFun(t *testing.T) {
	pic := testPNG(t, color.RGBA{B: 200, A: 255})
	wire := bearerWire(t, "/v1/images/generations", "sk-sf", func(*http.Request) (int, any) {
		return http.StatusOK, map[string]any{"created": 1, "data": []any{map[string]any{"seed": 7, "finish_reason": "success", "b64_json": b64(pic)}}}
	})
	env := imageEnv(t)
	ref := testPNG(t, color.Black)
	res, out := runGenerateImage(t, wireImageTool("stepfun", "step-1x-medium", "sk-sf", wire.srv.URL+"/v1"), env,
		map[string]any{"prompt": "a cat on the moon", "aspect_ratio": "16:9", "reference_images": []any{workspaceRef(t, env, ref)}})
	requireSavedImage(t, res, out, pic)
	require.Equal(t, map[string]any{"model": "step-1x-medium", "prompt": "a cat on the moon", "response_format": "b64_json", "n": float64(1),
		"size": "1280x800", "style_reference": map[string]any{"source_url": "data:image/png;base64," + b64(ref)}}, wire.bodies[0])

	res, _ = runGenerateImage(t, wireImageTool("stepfun", "step-image-edit-2", "sk-sf", wire.srv.URL+"/v1"), env,
		map[string]any{"prompt": "p", "image_size": "768x1360", "reference_images": []any{"ref.png"}})
	require.False(t, res.IsError, res.Text)
	require.Equal(t, "768x1360", wire.bodies[1]["size"])
	require.NotContains(t, wire.bodies[1], "style_reference", "only step-1x models take a style reference")
}

func TestGenerateImageStepFunNoImages(t *testing.T) {
	wire := bearerWire(t, "/v1/images/generations", "sk-sf", func(*http.Request) (int, any) {
		return http.StatusOK, map[string]any{"data": []any{map[string]any{"text": "sorry"}}}
	})
	res, _ := runGenerateImage(t, wireImageTool("stepfun", "step-image-edit-2", "sk-sf", wire.srv.URL+"/v1"), imageEnv(t), map[string]any{"prompt": "p"})
	require.Equal(t, "Error: stepfun returned no images for this request", res.Text)
}

func TestGenerateImageZhipuDownloadsTheURL(t *testing.T) {
	pic := testPNG(t, color.RGBA{R: 77, A: 255})
	var wire *imageWire
	wire = startImageWire(t, func(r *http.Request, _ map[string]any) (int, any) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/files/img.png":
			return http.StatusOK, string(pic)
		case r.URL.Path != "/api/paas/v4/images/generations" || r.Header.Get("Authorization") != "Bearer zp-key":
			return http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": "1000", "message": "身份验证失败。"}}
		}
		return http.StatusOK, map[string]any{"created": 1, "data": []any{map[string]any{"url": wire.srv.URL + "/files/img.png"}}}
	})
	env := imageEnv(t)
	res, out := runGenerateImage(t, wireImageTool("zhipu", "cogview-4", "zp-key", wire.srv.URL+"/api/paas/v4"), env, map[string]any{"prompt": "a lake", "aspect_ratio": "9:16"})
	requireSavedImage(t, res, out, pic)
	require.Equal(t, map[string]any{"model": "cogview-4", "prompt": "a lake", "size": "960x1728"}, wire.bodies[0])

	res, _ = runGenerateImage(t, wireImageTool("zhipu", "cogview-4", "bad", wire.srv.URL+"/api/paas/v4"), env, map[string]any{"prompt": "a lake"})
	require.Equal(t, `Error: Zhipu image generation failed: {"error":{"code":"1000","message":"身份验证失败。"}}`+"\n", res.Text)
	res, _ = runGenerateImage(t, wireImageTool("zhipu", "cogview-4", "zp-key", wire.srv.URL+"/api/paas/v4"), env,
		map[string]any{"prompt": "a lake", "reference_images": []any{workspaceRef(t, env, pic)}})
	require.Equal(t, "Error: Zhipu image generation does not support reference images", res.Text)
}
