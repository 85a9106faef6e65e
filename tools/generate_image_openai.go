package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"path/filepath"
	"slices"
	"strings"
)

// openAIImages speaks the OpenAI Images API: generations, and edits
// (multipart, GPT Image models) when there are reference images.
type openAIImages struct {
	o      ImageGenOptions
	base   string
	label  string
	custom bool // custom: any model, no edits, "1K" means 1024x1024
}

func (c *openAIImages) generate(ctx context.Context, req imageRequest) ([][]byte, error) {
	model := req.Model
	if !c.custom {
		if _, rest, ok := strings.Cut(model, "/"); ok && (strings.HasPrefix(model, "openai/") || strings.HasPrefix(model, "openai_codex/")) {
			model = rest
		}
	}
	body := map[string]any{"model": model, "prompt": req.Prompt}
	gptImage := isGPTImageModel(model)
	if c.custom || !gptImage {
		body["response_format"], body["n"] = "b64_json", 1
	}
	if c.custom {
		body["size"] = customImageSize(req.AspectRatio, req.ImageSize)
	} else {
		body["size"] = openAIImageSize(model, req.AspectRatio, req.ImageSize)
	}
	for k, v := range c.o.ExtraBody {
		if v == nil {
			delete(body, k) // extraBody can opt out of a default such as response_format
			continue
		}
		body[k] = v
	}
	var resp []byte
	var err error
	switch {
	case len(req.References) > 0 && !c.custom:
		if !gptImage {
			return nil, fmt.Errorf("OpenAI model '%s' does not support reference images; use a GPT Image model", model)
		}
		resp, err = c.postEdit(ctx, body, req.References)
	default:
		resp, err = postImageJSON(ctx, c.o, c.base+"/images/generations", c.label, body)
	}
	if err != nil {
		return nil, err
	}
	return c.images(ctx, resp)
}

func (c *openAIImages) postEdit(ctx context.Context, body map[string]any, refs []string) ([]byte, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range body {
		switch v.(type) {
		case string, bool, float64, int, json.Number:
			_ = w.WriteField(k, fmt.Sprint(v))
		}
	}
	for _, p := range refs {
		raw, err := readLimited(p)
		if err != nil {
			return nil, err
		}
		mime, _ := imageKind(raw)
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="image[]"; filename=%q`, filepath.Base(p)))
		h.Set("Content-Type", mime)
		part, err := w.CreatePart(h)
		if err != nil {
			return nil, err
		}
		_, _ = part.Write(raw)
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return postImage(ctx, c.o, c.base+"/images/edits", c.label, w.FormDataContentType(), &buf)
}

// images decodes data[].b64_json and downloads data[].url.
func (c *openAIImages) images(ctx context.Context, resp []byte) ([][]byte, error) {
	var payload struct {
		Data []struct {
			B64JSON string `json:"b64_json"`
			URL     string `json:"url"`
		} `json:"data"`
		Error any `json:"error"`
	}
	if err := parseImageJSON(c.label, resp, &payload); err != nil {
		return nil, err
	}
	var out [][]byte
	for _, d := range payload.Data {
		switch {
		case d.B64JSON != "":
			raw, err := decodeImageB64(d.B64JSON)
			if err != nil {
				return nil, err
			}
			out = append(out, raw)
		case d.URL != "":
			raw, err := downloadImage(ctx, c.o.Downloads, d.URL)
			if err != nil {
				return nil, err
			}
			out = append(out, raw)
		}
	}
	return out, requireImages(c.o.Provider, out, payload.Error)
}

// openRouterImages asks OpenRouter's chat completions for image output.
type openRouterImages struct {
	o    ImageGenOptions
	base string
}

func (c *openRouterImages) generate(ctx context.Context, req imageRequest) ([][]byte, error) {
	var content any = req.Prompt
	if len(req.References) > 0 {
		blocks := []any{map[string]any{"type": "text", "text": req.Prompt}}
		for _, p := range req.References {
			url, err := referenceDataURL(p)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}})
		}
		content = blocks
	}
	body := map[string]any{
		"model":      req.Model,
		"messages":   []any{map[string]any{"role": "user", "content": content}},
		"modalities": []string{"image", "text"},
		"stream":     false,
	}
	cfg := map[string]string{}
	if req.AspectRatio != "" {
		cfg["aspect_ratio"] = req.AspectRatio
	}
	if req.ImageSize != "" {
		cfg["image_size"] = req.ImageSize
	}
	if len(cfg) > 0 {
		body["image_config"] = cfg
	}
	applyExtraBody(body, c.o.ExtraBody)
	resp, err := postImageJSON(ctx, c.o, c.base+"/chat/completions", "OpenRouter", body)
	if err != nil {
		return nil, err
	}
	var payload struct {
		Choices []struct {
			Message struct {
				Images []struct {
					ImageURL *struct {
						URL string `json:"url"`
					} `json:"image_url"`
				} `json:"images"`
			} `json:"message"`
		} `json:"choices"`
		Error any `json:"error"`
	}
	if err := parseImageJSON("OpenRouter", resp, &payload); err != nil {
		return nil, err
	}
	var out [][]byte
	for _, ch := range payload.Choices {
		for _, im := range ch.Message.Images {
			if im.ImageURL == nil {
				continue
			}
			raw, ok, err := decodeImageDataURL(im.ImageURL.URL)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, raw)
			}
		}
	}
	return out, requireImages("openrouter", out, payload.Error)
}

func isGPTImageModel(model string) bool {
	m := strings.ToLower(model)
	return strings.HasPrefix(m, "gpt-image") || strings.HasPrefix(m, "chatgpt-image")
}

// openAIImageSize is nanobot's choice: an explicit size the model supports,
// else the aspect ratio's size, else 1024x1024.
func openAIImageSize(model, aspect, size string) string {
	m := strings.ToLower(model)
	ratios, supported := gptImageRatios, []string{"1024x1024", "1536x1024", "1024x1536", "auto"}
	switch {
	case strings.HasPrefix(m, "dall-e-2"):
		ratios, supported = dalle2Ratios, []string{"256x256", "512x512", "1024x1024"}
	case strings.HasPrefix(m, "dall-e-3"):
		ratios, supported = dalle3Ratios, []string{"1024x1024", "1792x1024", "1024x1792"}
	case strings.HasPrefix(m, "gpt-image-2"):
		supported = nil // any WxH
	}
	if s := strings.ToLower(strings.TrimSpace(size)); s != "" {
		if supported != nil && slices.Contains(supported, s) {
			return s
		}
		if w, h, ok := strings.Cut(s, "x"); supported == nil && ok && isDigits(w) && isDigits(h) {
			return s
		}
	}
	if r, ok := ratios[aspect]; ok {
		return r
	}
	return "1024x1024"
}

func customImageSize(aspect, size string) string {
	if s := strings.TrimSpace(size); s != "" {
		if strings.EqualFold(s, "1k") {
			return "1024x1024"
		}
		return s
	}
	return openAIImageSize("gpt-image-2", aspect, "")
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

var (
	gptImageRatios = map[string]string{"1:1": "1024x1024", "16:9": "1536x1024", "9:16": "1024x1536", "3:4": "1024x1536", "4:3": "1536x1024"}
	dalle2Ratios   = map[string]string{"1:1": "1024x1024", "16:9": "1024x1024", "9:16": "1024x1024", "3:4": "1024x1024", "4:3": "1024x1024"}
	dalle3Ratios   = map[string]string{"1:1": "1024x1024", "16:9": "1792x1024", "9:16": "1024x1792", "3:4": "1024x1792", "4:3": "1792x1024"}
)
