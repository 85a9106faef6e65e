package tools

import (
	"context"
	"log/slog"
	"strings"
)

// stepFunImages speaks StepFun's images/generations; step-1x models take
// the first reference image as a style reference.
type stepFunImages struct {
	o    ImageGenOptions
	base string
}

var stepFunRatios = map[string]string{"1:1": "1024x1024", "16:9": "1280x800", "9:16": "800x1280", "3:4": "768x1360", "4:3": "1360x768"}

func (c *stepFunImages) generate(ctx context.Context, req imageRequest) ([][]byte, error) {
	body := map[string]any{"model": req.Model, "prompt": req.Prompt, "response_format": "b64_json", "n": 1,
		"size": imageSizeHint(req.AspectRatio, req.ImageSize, stepFunRatios, "1024x1024")}
	switch {
	case len(req.References) > 0 && strings.Contains(req.Model, "1x"):
		url, err := referenceDataURL(req.References[0])
		if err != nil {
			return nil, err
		}
		body["style_reference"] = map[string]any{"source_url": url}
	case len(req.References) > 0:
		slog.Warn("StepFun takes reference images with step-1x models only; ignoring them", "model", req.Model)
	}
	applyExtraBody(body, c.o.ExtraBody)
	resp, err := postImageJSON(ctx, c.o, c.base+"/images/generations", "StepFun", body)
	if err != nil {
		return nil, briefImageFailure(err)
	}
	return dataB64Images(resp, "StepFun", "stepfun")
}

// dataB64Images are the data[].b64_json images of an OpenAI-style answer.
func dataB64Images(resp []byte, label, provider string) ([][]byte, error) {
	var payload struct {
		Data []struct {
			B64JSON string `json:"b64_json"`
		} `json:"data"`
		Error any `json:"error"`
	}
	if err := parseImageJSON(label, resp, &payload); err != nil {
		return nil, err
	}
	var out [][]byte
	var err error
	for _, d := range payload.Data {
		if out, err = appendImageB64(out, d.B64JSON); err != nil {
			return nil, err
		}
	}
	return out, requireImages(provider, out, payload.Error)
}
