package tools

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ollamaImages speaks Ollama's native /api/generate for its image models
// (x/z-image-turbo and the like): width and height, no references.
type ollamaImages struct {
	o    ImageGenOptions
	base string
}

// ollamaImageBase is Ollama's native API under the apiBase chat uses: an
// OpenAI-compatible .../v1 becomes .../api.
func ollamaImageBase(base string) string {
	if b, ok := strings.CutSuffix(base, "/v1"); ok {
		return b + "/api"
	}
	return base
}

func (c *ollamaImages) generate(ctx context.Context, req imageRequest) ([][]byte, error) {
	if len(req.References) > 0 {
		return nil, errors.New("Ollama image generation does not support reference images")
	}
	w, h := ollamaDimensions(req.AspectRatio, req.ImageSize)
	body := map[string]any{"model": req.Model, "prompt": req.Prompt, "width": w, "height": h, "steps": 0}
	applyExtraBody(body, c.o.ExtraBody)
	body["stream"] = false // one JSON answer, whatever extraBody says
	resp, err := postImageJSON(ctx, c.o, c.base+"/generate", "Ollama", body)
	if err != nil {
		return nil, detailedImageFailure(err, "Ollama image generation")
	}
	var payload struct {
		Image  any `json:"image"`
		Images any `json:"images"`
		Error  any `json:"error"`
	}
	if err := parseImageJSON("Ollama", resp, &payload); err != nil {
		return nil, err
	}
	var out [][]byte
	for _, v := range []any{payload.Image, payload.Images} {
		if out, err = appendOllamaImages(out, v); err != nil {
			return nil, err
		}
	}
	return out, requireImages("ollama", out, payload.Error)
}

// appendOllamaImages appends the images of v: a base64 string or data URL, or a list of them.
func appendOllamaImages(out [][]byte, v any) ([][]byte, error) {
	switch v := v.(type) {
	case string:
		if raw, ok, err := decodeImageDataURL(v); ok || err != nil {
			return append(out, raw), err
		}
		return appendImageB64(out, v)
	case []any:
		var err error
		for _, item := range v {
			if out, err = appendOllamaImages(out, item); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

var (
	ollamaExplicitSize = regexp.MustCompile(`^\s*(\d+)\s*[xX]\s*(\d+)\s*$`)
	ollamaAspectRatio  = regexp.MustCompile(`^\s*(\d+)\s*:\s*(\d+)\s*$`)
	ollamaSizePresets  = map[string]int{"1K": 1024, "2K": 2048, "4K": 4096}
)

// ollamaDimensions is nanobot's choice: an explicit WxH, else the preset's
// long side (1024 by default) shaped by the aspect ratio, in multiples of 8.
func ollamaDimensions(aspect, size string) (width, height int) {
	long := 1024
	if s := strings.TrimSpace(size); s != "" {
		if m := ollamaExplicitSize.FindStringSubmatch(s); m != nil {
			w, _ := strconv.Atoi(m[1])
			h, _ := strconv.Atoi(m[2])
			return w, h
		}
		if v, ok := ollamaSizePresets[strings.ToUpper(s)]; ok {
			long = v
		}
	}
	m := ollamaAspectRatio.FindStringSubmatch(aspect)
	if m == nil {
		return long, long
	}
	rw, _ := strconv.Atoi(m[1])
	rh, _ := strconv.Atoi(m[2])
	if rw <= 0 || rh <= 0 {
		return long, long
	}
	short := func(a, b int) int { // long·a/b rounded (half to even) to a multiple of 8, at least 8
		return max(8, int(math.RoundToEven(float64(long)*float64(a)/float64(b)/8))*8)
	}
	if rw >= rh {
		return long, short(rh, rw)
	}
	return short(rw, rh), long
}
