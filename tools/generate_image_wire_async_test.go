package tools

import (
	"context"
	"image/color"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// modelScopeWire is ModelScope's asynchronous API: the submit returns a task
// id, and the task answers status until it has answered pending polls times.
func modelScopeWire(t *testing.T, pending int32, done func(base string) any) (*imageWire, *atomic.Int32) {
	var polls atomic.Int32
	var wire *imageWire
	wire = startImageWire(t, func(r *http.Request, _ map[string]any) (int, any) {
		if r.Method == http.MethodGet && r.URL.Path == "/files/out.png" {
			return http.StatusOK, string(testPNG(t, color.RGBA{B: 50, A: 255}))
		}
		if r.Header.Get("Authorization") != "Bearer ms-key" || r.Header.Get("X-Test") != "1" {
			return http.StatusUnauthorized, map[string]any{"errors": map[string]any{"message": "Please bind your Alibaba Cloud account"}}
		}
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/images/generations" && r.Header.Get("X-ModelScope-Async-Mode") == "true":
			return http.StatusOK, map[string]any{"task_status": "SUCCEED", "task_id": "abc123", "request_id": "r1"}
		case r.Method == http.MethodGet && r.URL.Path == "/v1/tasks/abc123" && r.Header.Get("X-ModelScope-Task-Type") == "image_generation":
			if polls.Add(1) <= pending {
				return http.StatusOK, map[string]any{"task_status": "RUNNING", "request_id": "r2"}
			}
			return http.StatusOK, done(wire.srv.URL)
		}
		return http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "unexpected " + r.Method + " " + r.URL.Path}}
	})
	return wire, &polls
}

func modelScopeTool(base string) *GenerateImageTool {
	tool := wireImageTool("modelscope", "Qwen/Qwen-Image-2512", "ms-key", base)
	tool.opts.PollInterval = time.Millisecond
	return tool
}

func TestGenerateImageModelScopeSubmitsAndPolls(t *testing.T) {
	wire, polls := modelScopeWire(t, 2, func(base string) any {
		return map[string]any{"task_status": "SUCCEED", "output_images": []any{base + "/files/out.png"}}
	})
	env := imageEnv(t)
	ref := testPNG(t, color.Black)
	res, out := runGenerateImage(t, modelScopeTool(wire.srv.URL+"/v1"), env,
		map[string]any{"prompt": "a lantern", "aspect_ratio": "3:4", "reference_images": []any{workspaceRef(t, env, ref)}})
	requireSavedImage(t, res, out, testPNG(t, color.RGBA{B: 50, A: 255}))
	require.Equal(t, int32(3), polls.Load(), "two running answers, then the result")
	require.Equal(t, map[string]any{"model": "Qwen/Qwen-Image-2512", "prompt": "a lantern", "size": "1140x1472",
		"image_url": "data:image/png;base64," + b64(ref)}, wire.bodies[0])
}

func TestGenerateImageModelScopeFailures(t *testing.T) {
	wire, _ := modelScopeWire(t, 0, func(string) any {
		return map[string]any{"task_status": "FAILED", "errors": map[string]any{"message": "NSFW content"}}
	})
	res, _ := runGenerateImage(t, modelScopeTool(wire.srv.URL+"/v1"), imageEnv(t), map[string]any{"prompt": "p"})
	require.Equal(t, `Error: ModelScope image generation task failed: {"errors":{"message":"NSFW content"},"task_status":"FAILED"}`+"\n", res.Text)

	forever, polls := modelScopeWire(t, 1000, nil)
	res, _ = runGenerateImage(t, modelScopeTool(forever.srv.URL+"/v1"), imageEnv(t), map[string]any{"prompt": "p"})
	require.Equal(t, "Error: ModelScope image generation timed out after 60 polls", res.Text)
	require.Equal(t, int32(60), polls.Load())

	res, _ = runGenerateImage(t, wireImageTool("modelscope", "m", "wrong", wire.srv.URL+"/v1"), imageEnv(t), map[string]any{"prompt": "p"})
	require.Equal(t, `Error: ModelScope image generation failed: {"errors":{"message":"Please bind your Alibaba Cloud account"}}`+"\n", res.Text)
}

func TestGenerateImageModelScopeStopsWithTheContext(t *testing.T) {
	wire, polls := modelScopeWire(t, 1000, nil)
	tool := modelScopeTool(wire.srv.URL + "/v1")
	tool.opts.PollInterval = time.Hour
	env := imageEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() { done <- tool.Run(ctx, env, map[string]any{"prompt": "p"}) }()
	require.Eventually(t, func() bool { return polls.Load() == 1 }, 10*time.Second, time.Millisecond, "the first poll is at once")
	cancel()
	var res Result
	require.Eventually(t, func() bool {
		select {
		case res = <-done:
			return true
		default:
			return false
		}
	}, 10*time.Second, time.Millisecond, "a cancelled turn stops waiting for the next poll")
	require.Equal(t, "Error: ModelScope image generation: context canceled", res.Text)
}
