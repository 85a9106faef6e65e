package tools

import (
	"context"
	"errors"
)

// zhipuImages speaks Zhipu's images/generations (GLM-Image, CogView): text
// only, answered with image URLs that are downloaded.
type zhipuImages struct {
	o    ImageGenOptions
	base string
}

var zhipuRatios = map[string]string{"1:1": "1280x1280", "16:9": "1728x960", "9:16": "960x1728", "3:4": "1088x1472", "4:3": "1472x1088"}

func (c *zhipuImages) generate(ctx context.Context, req imageRequest) ([][]byte, error) {
	if len(req.References) > 0 {
		return nil, errors.New("Zhipu image generation does not support reference images")
	}
	body := map[string]any{"model": req.Model, "prompt": req.Prompt,
		"size": imageSizeHint(req.AspectRatio, req.ImageSize, zhipuRatios, "1280x1280")}
	applyExtraBody(body, c.o.ExtraBody)
	resp, err := postImageJSON(ctx, c.o, c.base+"/images/generations", "Zhipu", body)
	if err != nil {
		return nil, briefImageFailure(err)
	}
	var payload struct {
		Data []struct {
			URL string `json:"url"`
		} `json:"data"`
		Error any `json:"error"`
	}
	if err := parseImageJSON("Zhipu", resp, &payload); err != nil {
		return nil, err
	}
	var out [][]byte
	for _, d := range payload.Data {
		if d.URL == "" {
			continue
		}
		raw, err := downloadImage(ctx, c.o.Downloads, d.URL)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, requireImages("zhipu", out, payload.Error)
}
