package tools

import (
	"context"
	"strings"
)

// aiHubMixImages speaks AIHubMix's unified predictions API: the request
// under "input", references inline, and answers in many shapes.
type aiHubMixImages struct {
	o    ImageGenOptions
	base string
}

// aiHubMixModelPath is the model's path under /models: OpenAI's image models need their vendor.
func aiHubMixModelPath(model string) string {
	if !strings.Contains(model, "/") && (strings.HasPrefix(model, "gpt-image-") || strings.HasPrefix(model, "dall-e-")) {
		return "openai/" + model
	}
	return model
}

func (c *aiHubMixImages) generate(ctx context.Context, req imageRequest) ([][]byte, error) {
	input := map[string]any{"prompt": req.Prompt, "n": 1, "size": imageSizeHint(req.AspectRatio, req.ImageSize, gptImageRatios, "auto")}
	refs, err := referencesField(req.References)
	if err != nil {
		return nil, err
	}
	if refs != nil {
		input["image"] = refs
	}
	applyExtraBody(input, c.o.ExtraBody)
	resp, err := postImageJSON(ctx, c.o, c.base+"/models/"+aiHubMixModelPath(req.Model)+"/predictions", "AIHubMix", map[string]any{"input": input})
	if err != nil {
		return nil, briefImageFailure(err)
	}
	var payload map[string]any
	if err := parseImageJSON("AIHubMix", resp, &payload); err != nil {
		return nil, err
	}
	var out [][]byte
	for _, key := range []string{"data", "output"} {
		if v, ok := payload[key]; ok {
			if out, err = c.collect(ctx, out, v); err != nil {
				return nil, err
			}
		}
	}
	return out, requireImages("aihubmix", out, payload["error"])
}

// collect appends every image found in v, as nanobot looks for them: data
// URLs, http(s) URLs (downloaded), b64_json, bytesBase64/base64, image_url,
// url, and nested images/image/output.
func (c *aiHubMixImages) collect(ctx context.Context, out [][]byte, v any) ([][]byte, error) {
	var err error
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			if out, err = c.collect(ctx, out, item); err != nil {
				return nil, err
			}
		}
		return out, nil
	case string:
		raw, ok, err := decodeImageDataURL(v)
		switch {
		case ok || err != nil:
			return append(out, raw), err
		case strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://"):
			raw, err := downloadImage(ctx, c.o.Downloads, v)
			return append(out, raw), err
		}
		return out, nil
	case map[string]any:
	default:
		return out, nil
	}
	m := v.(map[string]any)
	var nested []any // values searched in turn after the direct fields
	switch b := m["b64_json"].(type) {
	case string:
		if out, err = appendImageB64(out, b); err != nil {
			return nil, err
		}
	case nil:
	default:
		nested = append(nested, b)
	}
	if s, _ := firstSet(m, "bytesBase64", "bytes_base64", "base64").(string); s != "" {
		if out, err = appendImageB64(out, s); err != nil {
			return nil, err
		}
	}
	if iu := firstSet(m, "image_url", "imageUrl"); iu != nil {
		if um, ok := iu.(map[string]any); ok {
			iu = um["url"]
		}
		nested = append(nested, iu)
	}
	for _, key := range []string{"url", "images", "image", "output"} {
		if x, ok := m[key]; ok && x != nil {
			nested = append(nested, x)
		}
	}
	return c.collect(ctx, out, nested)
}

// firstSet is the first of m's keys with a value other than null or "".
func firstSet(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v := m[k]; v != nil && v != "" {
			return v
		}
	}
	return nil
}
