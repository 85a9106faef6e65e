package tools

import (
	"context"
	"log/slog"
	"net/url"
	"slices"
	"strings"
)

// geminiImages speaks the Generative Language API natively (not the
// OpenAI-compatible shim chat uses): Imagen models through :predict, the
// Gemini image models through :generateContent with references inline.
type geminiImages struct {
	o    ImageGenOptions
	base string
}

// imagenAspectRatios are the ratios Imagen takes; others are left to its default.
var imagenAspectRatios = []string{"1:1", "9:16", "16:9", "3:4", "4:3"}

func (c *geminiImages) generate(ctx context.Context, req imageRequest) ([][]byte, error) {
	if strings.Contains(strings.ToLower(req.Model), "imagen") {
		if len(req.References) > 0 {
			slog.Warn("Imagen models do not support reference images; ignoring them", "count", len(req.References), "model", req.Model)
		}
		return c.imagen(ctx, req)
	}
	return c.flash(ctx, req)
}

func (c *geminiImages) modelURL(model, method string) string {
	return c.base + "/models/" + url.PathEscape(model) + ":" + method
}

func (c *geminiImages) imagen(ctx context.Context, req imageRequest) ([][]byte, error) {
	params := map[string]any{"sampleCount": 1}
	if slices.Contains(imagenAspectRatios, req.AspectRatio) {
		params["aspectRatio"] = req.AspectRatio
	}
	body := map[string]any{"instances": []any{map[string]any{"prompt": req.Prompt}}, "parameters": params}
	applyExtraBody(body, c.o.ExtraBody)
	resp, err := postImageJSON(ctx, c.o, c.modelURL(req.Model, "predict"), "Gemini Imagen", body)
	if err != nil {
		return nil, detailedImageFailure(err, "Gemini Imagen generation")
	}
	var payload struct {
		Predictions []struct {
			BytesBase64Encoded string `json:"bytesBase64Encoded"`
		} `json:"predictions"`
		Error any `json:"error"`
	}
	if err := parseImageJSON("Gemini Imagen", resp, &payload); err != nil {
		return nil, err
	}
	var out [][]byte
	for _, p := range payload.Predictions {
		if out, err = appendImageB64(out, p.BytesBase64Encoded); err != nil {
			return nil, err
		}
	}
	return out, requireImages("gemini", out, payload.Error)
}

func (c *geminiImages) flash(ctx context.Context, req imageRequest) ([][]byte, error) {
	var parts []any
	for _, p := range req.References {
		mime, b64, err := referenceBase64(p)
		if err != nil {
			return nil, err
		}
		parts = append(parts, map[string]any{"inlineData": map[string]any{"mimeType": mime, "data": b64}})
	}
	parts = append(parts, map[string]any{"text": req.Prompt})
	body := map[string]any{
		"contents":         []any{map[string]any{"role": "user", "parts": parts}},
		"generationConfig": map[string]any{"responseModalities": []string{"TEXT", "IMAGE"}},
	}
	applyExtraBody(body, c.o.ExtraBody)
	resp, err := postImageJSON(ctx, c.o, c.modelURL(req.Model, "generateContent"), "Gemini", body)
	if err != nil {
		return nil, detailedImageFailure(err, "Gemini image generation")
	}
	var payload struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					InlineData *struct {
						Data string `json:"data"`
					} `json:"inlineData"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
		Error any `json:"error"`
	}
	if err := parseImageJSON("Gemini", resp, &payload); err != nil {
		return nil, err
	}
	var out [][]byte
	for _, cand := range payload.Candidates {
		for _, part := range cand.Content.Parts {
			if part.InlineData == nil {
				continue
			}
			if out, err = appendImageB64(out, part.InlineData.Data); err != nil {
				return nil, err
			}
		}
	}
	return out, requireImages("gemini", out, payload.Error)
}
