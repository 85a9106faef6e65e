package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// modelScopeImages speaks ModelScope's asynchronous AIGC API: a submit
// returns a task id, and the task is polled until it succeeds or fails.
type modelScopeImages struct {
	o         ImageGenOptions
	base      string
	pollEvery time.Duration
}

// modelScopeMaxPolls bounds the wait, as nanobot's 60 polls 5 s apart do.
const (
	modelScopeMaxPolls  = 60
	modelScopePollEvery = 5 * time.Second
)

var modelScopeRatios = map[string]string{"1:1": "1328x1328", "16:9": "1664x928", "9:16": "928x1664", "3:4": "1140x1472", "4:3": "1472x1140"}

func (c *modelScopeImages) generate(ctx context.Context, req imageRequest) ([][]byte, error) {
	body := map[string]any{"model": req.Model, "prompt": req.Prompt,
		"size": imageSizeHint(req.AspectRatio, req.ImageSize, modelScopeRatios, "1024x1024")}
	refs, err := referencesField(req.References)
	if err != nil {
		return nil, err
	}
	if refs != nil {
		body["image_url"] = refs
	}
	applyExtraBody(body, c.o.ExtraBody)
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	submit, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/images/generations", bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	submit.Header.Set("Content-Type", "application/json")
	submit.Header.Set("X-ModelScope-Async-Mode", "true")
	resp, err := sendImageRequest(c.o, submit, "ModelScope")
	if he, ok := errors.AsType[*imageHTTPError](err); ok {
		return nil, fmt.Errorf("ModelScope image generation failed: %s", he.detail())
	} else if err != nil {
		return nil, err
	}
	var task struct {
		TaskID string `json:"task_id"`
		Error  any    `json:"error"`
	}
	if err := parseImageJSON("ModelScope", resp, &task); err != nil {
		return nil, err
	}
	if task.TaskID == "" {
		return nil, fmt.Errorf("ModelScope did not return a task_id: %s", resp[:min(500, len(resp))])
	}
	images, err := c.poll(ctx, task.TaskID)
	if err != nil {
		return nil, err
	}
	return images, requireImages("modelscope", images, task.Error)
}

// poll asks for the task until it succeeds or fails, at most modelScopeMaxPolls times.
func (c *modelScopeImages) poll(ctx context.Context, taskID string) ([][]byte, error) {
	wait := time.NewTimer(0)
	defer wait.Stop()
	for range modelScopeMaxPolls {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("ModelScope image generation: %w", ctx.Err())
		case <-wait.C:
		}
		wait.Reset(c.pollEvery)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/tasks/"+url.PathEscape(taskID), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-ModelScope-Task-Type", "image_generation")
		resp, err := sendImageRequest(c.o, req, "ModelScope")
		if he, ok := errors.AsType[*imageHTTPError](err); ok {
			return nil, fmt.Errorf("ModelScope task polling failed: %s", he.detail())
		} else if err != nil {
			continue // a dropped connection: ask again, as nanobot does
		}
		var state struct {
			TaskStatus   string   `json:"task_status"`
			OutputImages []string `json:"output_images"`
		}
		if err := parseImageJSON("ModelScope", resp, &state); err != nil {
			return nil, err
		}
		switch state.TaskStatus {
		case "SUCCEED":
			return c.outputImages(ctx, state.OutputImages)
		case "FAILED":
			return nil, fmt.Errorf("ModelScope image generation task failed: %s", resp[:min(1000, len(resp))])
		}
	}
	return nil, fmt.Errorf("ModelScope image generation timed out after %d polls", modelScopeMaxPolls)
}

func (c *modelScopeImages) outputImages(ctx context.Context, urls []string) ([][]byte, error) {
	var out [][]byte
	for _, u := range urls {
		raw, ok, err := decodeImageDataURL(u)
		if !ok && err == nil && u != "" {
			raw, err = downloadImage(ctx, c.o.Downloads, u)
			ok = true
		}
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, raw)
		}
	}
	return out, nil
}
