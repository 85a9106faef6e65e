package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// imageRequest is one call to a provider: it returns one or more images.
type imageRequest struct {
	Prompt, Model          string
	References             []string // absolute paths, already checked to be images
	AspectRatio, ImageSize string
}

type imageClient interface {
	generate(ctx context.Context, req imageRequest) ([][]byte, error)
}

// imageProvidersElsewhere are nanobot's image providers whose native APIs
// this build does not speak.
var imageProvidersElsewhere = []string{"openai_codex", "aihubmix", "minimax", "gemini", "ollama", "stepfun", "zhipu", "modelscope"}

// maxImageBytes bounds a provider response and a downloaded image (nanobot's 32 MiB).
const maxImageBytes = 32 << 20

func newImageClient(o ImageGenOptions) (imageClient, error) {
	base := strings.TrimRight(o.APIBase, "/")
	switch o.Provider {
	case "openai":
		if o.APIKey == "" {
			return nil, fmt.Errorf("OpenAI API key is not configured. Set providers.openai.apiKey.")
		}
		return &openAIImages{o: o, base: orDefault(base, "https://api.openai.com/v1"), label: "OpenAI"}, nil
	case "custom":
		if base == "" {
			return nil, fmt.Errorf("Custom image generation API base is not configured. Set providers.custom.apiBase.")
		}
		return &openAIImages{o: o, base: base, label: "Custom", custom: true}, nil
	case "openrouter":
		if o.APIKey == "" {
			return nil, fmt.Errorf("OpenRouter API key is not configured. Set providers.openrouter.apiKey.")
		}
		return &openRouterImages{o: o, base: orDefault(base, "https://openrouter.ai/api/v1")}, nil
	}
	return nil, ImageProviderSupported(o.Provider)
}

// ImageProviderSupported is nil for the image providers this build calls,
// else why not (nanobot's other providers are named as such).
func ImageProviderSupported(name string) error {
	switch {
	case name == "openai" || name == "custom" || name == "openrouter":
		return nil
	case slices.Contains(imageProvidersElsewhere, name):
		return fmt.Errorf("image generation provider '%s' is not in this build (openai, custom and openrouter are)", name)
	}
	return fmt.Errorf("unsupported image generation provider '%s'", name)
}

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
	if err := json.Unmarshal(resp, &payload); err != nil {
		return nil, fmt.Errorf("%s image generation returned invalid JSON: %w", c.label, err)
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
			raw, err := readLimited(p)
			if err != nil {
				return nil, err
			}
			mime, _ := imageKind(raw)
			blocks = append(blocks, map[string]any{"type": "image_url", "image_url": map[string]any{
				"url": "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(raw)}})
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
	for k, v := range c.o.ExtraBody {
		body[k] = v
	}
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
	if err := json.Unmarshal(resp, &payload); err != nil {
		return nil, fmt.Errorf("OpenRouter image generation returned invalid JSON: %w", err)
	}
	var out [][]byte
	for _, ch := range payload.Choices {
		for _, im := range ch.Message.Images {
			if im.ImageURL == nil {
				continue
			}
			if _, b64, ok := strings.Cut(im.ImageURL.URL, ";base64,"); ok && strings.HasPrefix(im.ImageURL.URL, "data:image/") {
				raw, err := decodeImageB64(b64)
				if err != nil {
					return nil, err
				}
				out = append(out, raw)
			}
		}
	}
	return out, requireImages("openrouter", out, payload.Error)
}

func postImageJSON(ctx context.Context, o ImageGenOptions, url, label string, body map[string]any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return postImage(ctx, o, url, label, "application/json", bytes.NewReader(b))
}

// postImage sends one provider request; a non-2xx status is an error with the body's start.
func postImage(ctx context.Context, o ImageGenOptions, url, label, contentType string, body io.Reader) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	for k, v := range o.ExtraHeaders {
		req.Header.Set(k, v)
	}
	resp, err := o.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s image generation request failed: %w", label, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 2*maxImageBytes))
	if err != nil {
		return nil, fmt.Errorf("%s image generation response: %w", label, err)
	}
	if resp.StatusCode/100 != 2 {
		detail := string(raw)
		if len(detail) > 1000 {
			detail = detail[:1000]
		}
		return nil, fmt.Errorf("%s image generation failed (HTTP %d): %s", label, resp.StatusCode, detail)
	}
	return raw, nil
}

func requireImages(provider string, images [][]byte, providerErr any) error {
	switch {
	case len(images) > 0:
		return nil
	case providerErr != nil:
		return fmt.Errorf("%s returned no images: %v", provider, providerErr)
	}
	return fmt.Errorf("%s returned no images for this request", provider)
}

func decodeImageB64(s string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		return nil, fmt.Errorf("generated image payload was not valid base64")
	}
	if _, ext := imageKind(raw); ext == "" {
		return nil, fmt.Errorf("generated image payload was not a supported image")
	}
	return raw, nil
}

// downloadImage fetches an image URL a provider returned, through the SSRF-guarded client.
func downloadImage(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to download generated image: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("failed to download generated image: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("failed to download generated image (HTTP %d)", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxImageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("failed to download generated image: %w", err)
	}
	if len(raw) > maxImageBytes {
		return nil, fmt.Errorf("generated image exceeded the 32 MiB download limit")
	}
	if _, ext := imageKind(raw); ext == "" {
		return nil, fmt.Errorf("generated image URL did not return a supported image")
	}
	return raw, nil
}

func readLimited(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("reference image: %w", err)
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxImageBytes))
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
