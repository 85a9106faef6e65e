package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
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

// imageProvider is how generate_image reaches one of nanobot's image providers.
type imageProvider struct {
	label       string // as nanobot's messages name it
	defaultBase string // nanobot's, when providers.<name>.apiBase is empty
	keyOptional bool
	timeout     time.Duration // nanobot's per-provider HTTP timeout; 0 = the tool's 120 s
	client      func(o ImageGenOptions, base string) imageClient
}

// imageProviders are the providers this build calls, by their config name.
var imageProviders = map[string]imageProvider{
	"openai": {label: "OpenAI", defaultBase: "https://api.openai.com/v1", client: func(o ImageGenOptions, base string) imageClient {
		return &openAIImages{o: o, base: base, label: "OpenAI"}
	}},
	"custom": {label: "Custom", keyOptional: true, client: func(o ImageGenOptions, base string) imageClient {
		return &openAIImages{o: o, base: base, label: "Custom", custom: true}
	}},
	"openrouter": {label: "OpenRouter", defaultBase: "https://openrouter.ai/api/v1", client: func(o ImageGenOptions, base string) imageClient {
		return &openRouterImages{o: o, base: base}
	}},
	// Gemini: the native API, not the registry's OpenAI-compatible base.
	"gemini": {label: "Gemini", defaultBase: "https://generativelanguage.googleapis.com/v1beta", client: func(o ImageGenOptions, base string) imageClient {
		return &geminiImages{o: o, base: base}
	}},
	"minimax": {label: "MiniMax", defaultBase: "https://api.minimax.io/v1", timeout: 300 * time.Second, client: func(o ImageGenOptions, base string) imageClient {
		return &miniMaxImages{o: o, base: base}
	}},
	"stepfun": {label: "StepFun", defaultBase: "https://api.stepfun.com/v1", client: func(o ImageGenOptions, base string) imageClient {
		return &stepFunImages{o: o, base: base}
	}},
	"zhipu": {label: "Zhipu", defaultBase: "https://open.bigmodel.cn/api/paas/v4", timeout: 300 * time.Second, client: func(o ImageGenOptions, base string) imageClient {
		return &zhipuImages{o: o, base: base}
	}},
	"aihubmix": {label: "AIHubMix", defaultBase: "https://aihubmix.com/v1", timeout: 300 * time.Second, client: func(o ImageGenOptions, base string) imageClient {
		return &aiHubMixImages{o: o, base: base}
	}},
	// Ollama runs locally: no key, its native API under chat's /v1 base.
	"ollama": {label: "Ollama", defaultBase: "http://localhost:11434/api", keyOptional: true, timeout: 300 * time.Second, client: func(o ImageGenOptions, base string) imageClient {
		return &ollamaImages{o: o, base: ollamaImageBase(base)}
	}},
	"modelscope": {label: "ModelScope", defaultBase: "https://api-inference.modelscope.cn/v1", timeout: 300 * time.Second, client: func(o ImageGenOptions, base string) imageClient {
		return &modelScopeImages{o: o, base: base, pollEvery: orDefault(o.PollInterval, modelScopePollEvery)}
	}},
}

// codexImageRefusal is why openai_codex stays out: nanobot signs its
// requests with the ChatGPT/Codex OAuth login, which this build lacks.
const codexImageRefusal = "image generation provider 'openai_codex' needs nanobot's Codex OAuth login (ChatGPT subscription), which this build does not have; use openai with an API key"

// maxImageBytes bounds a provider response and a downloaded image (nanobot's 32 MiB).
const maxImageBytes = 32 << 20

func newImageClient(o ImageGenOptions) (imageClient, error) {
	if err := ImageProviderSupported(o.Provider); err != nil {
		return nil, err
	}
	p := imageProviders[o.Provider]
	base := orDefault(strings.TrimRight(o.APIBase, "/"), p.defaultBase)
	switch {
	case base == "":
		return nil, fmt.Errorf("%s image generation API base is not configured. Set providers.%s.apiBase.", p.label, o.Provider)
	case o.APIKey == "" && !p.keyOptional:
		return nil, fmt.Errorf("%s API key is not configured. Set providers.%s.apiKey.", p.label, o.Provider)
	}
	if p.timeout > 0 && o.HTTP != nil && o.HTTP.Timeout != 0 && o.HTTP.Timeout < p.timeout {
		longer := *o.HTTP
		longer.Timeout = p.timeout
		o.HTTP = &longer
	}
	return p.client(o, base), nil
}

// ImageProviderSupported is nil for the image providers this build calls,
// else why not.
func ImageProviderSupported(name string) error {
	switch _, ok := imageProviders[name]; {
	case ok:
		return nil
	case name == "openai_codex":
		return errors.New(codexImageRefusal)
	}
	return fmt.Errorf("unsupported image generation provider '%s'", name)
}

func postImageJSON(ctx context.Context, o ImageGenOptions, url, label string, body map[string]any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return postImage(ctx, o, url, label, "application/json", bytes.NewReader(b))
}

// postImage sends one provider request.
func postImage(ctx context.Context, o ImageGenOptions, url, label, contentType string, body io.Reader) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	return sendImageRequest(o, req, label)
}

// sendImageRequest adds the provider's credential and extraHeaders, sends
// req and reads the answer; a non-2xx status is an *imageHTTPError.
func sendImageRequest(o ImageGenOptions, req *http.Request, label string) ([]byte, error) {
	switch {
	case o.Provider == "gemini":
		req.Header.Set("x-goog-api-key", o.APIKey)
	case o.APIKey != "":
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	for k, v := range o.ExtraHeaders {
		req.Header.Set(k, v)
	}
	resp, err := o.HTTP.Do(req)
	if err != nil {
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			return nil, fmt.Errorf("%s image generation timed out", label)
		}
		return nil, fmt.Errorf("%s image generation request failed: %w", label, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 2*maxImageBytes))
	if err != nil {
		return nil, fmt.Errorf("%s image generation response: %w", label, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &imageHTTPError{label: label, status: resp.StatusCode, body: raw}
	}
	return raw, nil
}

// imageHTTPError is a provider's non-2xx answer; Error is nanobot's OpenAI
// wording, and the other clients reword it as nanobot's do.
type imageHTTPError struct {
	label  string
	status int
	body   []byte
}

func (e *imageHTTPError) Error() string {
	return fmt.Sprintf("%s image generation failed (HTTP %d): %s", e.label, e.status, e.start(1000))
}

// start is the body's first n bytes.
func (e *imageHTTPError) start(n int) string {
	return string(e.body[:min(n, len(e.body))])
}

// detail is the error message of a JSON error body, else the body's start.
func (e *imageHTTPError) detail() string {
	var payload struct {
		Error any `json:"error"`
	}
	if json.Unmarshal(e.body, &payload) == nil {
		switch v := payload.Error.(type) {
		case map[string]any:
			if msg, _ := v["message"].(string); msg != "" {
				return msg
			}
			return fmt.Sprint(v)
		case nil:
		default:
			return fmt.Sprint(v)
		}
	}
	return orDefault(e.start(500), "<empty response body>")
}

// briefImageFailure words a non-2xx answer as nanobot's AIHubMix, MiniMax,
// StepFun and Zhipu clients do: the body's start, no status.
func briefImageFailure(err error) error {
	if he, ok := errors.AsType[*imageHTTPError](err); ok {
		return fmt.Errorf("%s image generation failed: %s", he.label, he.start(500))
	}
	return err
}

// detailedImageFailure words a non-2xx answer with the status and the
// provider's error message, as nanobot's Ollama and Gemini clients do.
func detailedImageFailure(err error, what string) error {
	if he, ok := errors.AsType[*imageHTTPError](err); ok {
		return fmt.Errorf("%s failed (HTTP %d): %s", what, he.status, he.detail())
	}
	return err
}

// applyExtraBody sets providers.<name>.extraBody over body's fields.
func applyExtraBody(body, extra map[string]any) {
	for k, v := range extra {
		body[k] = v
	}
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

// parseImageJSON decodes a provider's 2xx answer into v.
func parseImageJSON(label string, resp []byte, v any) error {
	if err := json.Unmarshal(resp, v); err != nil {
		return fmt.Errorf("%s image generation returned invalid JSON: %w", label, err)
	}
	return nil
}

// appendImageB64 appends the image of base64 s; an empty s is no image.
func appendImageB64(images [][]byte, s string) ([][]byte, error) {
	if s == "" {
		return images, nil
	}
	raw, err := decodeImageB64(s)
	if err != nil {
		return nil, err
	}
	return append(images, raw), nil
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

// referenceDataURL is a reference image as a data URL, as the providers take them inline.
func referenceDataURL(p string) (string, error) {
	mime, b64, err := referenceBase64(p)
	return "data:" + mime + ";base64," + b64, err
}

// referencesField is the references as AIHubMix and ModelScope take them:
// one data URL, a list of them, or nil for none.
func referencesField(refs []string) (any, error) {
	var urls []any
	for _, p := range refs {
		u, err := referenceDataURL(p)
		if err != nil {
			return nil, err
		}
		urls = append(urls, u)
	}
	switch len(urls) {
	case 0:
		return nil, nil
	case 1:
		return urls[0], nil
	}
	return urls, nil
}

func referenceBase64(p string) (mime, b64 string, err error) {
	raw, err := readLimited(p)
	if err != nil {
		return "", "", err
	}
	mime, _ = imageKind(raw)
	return mime, base64.StdEncoding.EncodeToString(raw), nil
}

// decodeImageDataURL is the image of a data:image/...;base64 URL; ok is false for other strings.
func decodeImageDataURL(s string) (raw []byte, ok bool, err error) {
	_, b64, found := strings.Cut(s, ";base64,")
	if !strings.HasPrefix(s, "data:image/") || !found {
		return nil, false, nil
	}
	raw, err = decodeImageB64(b64)
	return raw, true, err
}

// imageSizeHint is nanobot's size choice for StepFun, Zhipu, ModelScope and
// AIHubMix: an explicit WxH, else the aspect ratio's size, else fallback.
func imageSizeHint(aspect, size string, ratios map[string]string, fallback string) string {
	if strings.Contains(strings.ToLower(size), "x") {
		return size
	}
	if r, ok := ratios[aspect]; ok {
		return r
	}
	return fallback
}
