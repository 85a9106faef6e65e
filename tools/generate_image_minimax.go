package tools

import (
	"context"
	"slices"
)

// miniMaxImages speaks MiniMax's image_generation: base64 answers, aspect
// ratios by name, reference images as character subject references.
type miniMaxImages struct {
	o    ImageGenOptions
	base string
}

var miniMaxRatios = []string{"1:1", "16:9", "4:3", "3:2", "2:3", "3:4", "9:16", "21:9"}

func (c *miniMaxImages) generate(ctx context.Context, req imageRequest) ([][]byte, error) {
	ratio := "1:1"
	if slices.Contains(miniMaxRatios, req.AspectRatio) {
		ratio = req.AspectRatio
	}
	body := map[string]any{"model": req.Model, "prompt": req.Prompt, "response_format": "base64", "aspect_ratio": ratio}
	if len(req.References) > 0 {
		var subjects []any
		for _, p := range req.References {
			url, err := referenceDataURL(p)
			if err != nil {
				return nil, err
			}
			subjects = append(subjects, map[string]any{"type": "character", "image_file": url})
		}
		body["subject_reference"] = subjects
	}
	applyExtraBody(body, c.o.ExtraBody)
	resp, err := postImageJSON(ctx, c.o, c.base+"/image_generation", "MiniMax", body)
	if err != nil {
		return nil, briefImageFailure(err)
	}
	var payload struct {
		Data *struct {
			ImageBase64 []string `json:"image_base64"`
		} `json:"data"`
		// BaseResp carries MiniMax's own error (HTTP 200, status_code not 0).
		BaseResp *struct {
			StatusCode int    `json:"status_code"`
			StatusMsg  string `json:"status_msg"`
		} `json:"base_resp"`
	}
	if err := parseImageJSON("MiniMax", resp, &payload); err != nil {
		return nil, err
	}
	var out [][]byte
	if payload.Data != nil {
		for _, s := range payload.Data.ImageBase64 {
			if out, err = appendImageB64(out, s); err != nil {
				return nil, err
			}
		}
	}
	var providerErr any
	if b := payload.BaseResp; b != nil && b.StatusCode != 0 {
		providerErr = b.StatusMsg
	}
	return out, requireImages("minimax", out, providerErr)
}
