package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ImageGenOptions are tools.imageGeneration plus the chosen provider's
// credentials (providers.<provider>), mapped by the caller.
type ImageGenOptions struct {
	Provider, Model                      string
	DefaultAspectRatio, DefaultImageSize string
	MaxImagesPerTurn                     int
	// SaveDir is relative to the workspace; images go to SaveDir/YYYY-MM-DD/.
	SaveDir      string
	APIKey       string
	APIBase      string
	ExtraHeaders map[string]string
	ExtraBody    map[string]any
	// HTTP sends the provider requests; nil = a client with a 120 s timeout.
	HTTP *http.Client
	// Downloads fetches images a provider returns as URLs (SSRF-guarded by RegisterBuiltins).
	Downloads *http.Client
	// PollInterval spaces the polls of an asynchronous provider (ModelScope); 0 = nanobot's 5 s.
	PollInterval time.Duration
}

const generateImageDescription = "Generate or edit images and store them as persistent artifacts. " +
	"Returns artifact ids and local paths. For edits, pass prior generated image paths " +
	"or user image paths as reference_images."

const generateImageParameters = `{
  "type": "object",
  "properties": {
    "prompt": {"type": "string", "minLength": 1, "description": "Detailed image generation or edit prompt. Include style, subject, composition, colors, and constraints."},
    "reference_images": {"type": "array", "items": {"type": "string", "description": "Local path of an existing image artifact or user-provided image to use as an edit reference."}, "description": "Optional local image paths. Use generated artifact paths for iterative edits."},
    "aspect_ratio": {"type": "string", "description": "Optional output aspect ratio, e.g. 1:1, 16:9, 9:16, 4:3."},
    "image_size": {"type": "string", "description": "Optional output size hint supported by the configured provider, e.g. 1K, 2K, 4K, or 1024x1024."},
    "count": {"type": "integer", "minimum": 1, "maximum": 8, "description": "Number of images to generate in this turn."}
  },
  "required": ["prompt"]
}`

// GenerateImageTool is generate_image: images from the configured provider,
// saved in the workspace and sent to the current chat as media.
type GenerateImageTool struct {
	opts   ImageGenOptions
	sender MessageSender
}

// NewGenerateImage builds generate_image; sender (may be nil) delivers the images to the chat.
func NewGenerateImage(opts ImageGenOptions, sender MessageSender) *GenerateImageTool {
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{Timeout: 120 * time.Second}
	}
	if opts.Downloads == nil {
		opts.Downloads = opts.HTTP
	}
	return &GenerateImageTool{opts: opts, sender: sender}
}

func (t *GenerateImageTool) Name() string        { return "generate_image" }
func (t *GenerateImageTool) Description() string { return generateImageDescription }
func (t *GenerateImageTool) Parameters() json.RawMessage {
	return json.RawMessage(generateImageParameters)
}
func (t *GenerateImageTool) Flags() Flags { return Flags{SideEffects: true} }

// imageArtifact is one saved image, as nanobot's sidecar and tool result describe it.
type imageArtifact struct {
	ID           string   `json:"id"`
	Path         string   `json:"path"`
	MIME         string   `json:"mime"`
	Prompt       string   `json:"prompt"`
	Model        string   `json:"model"`
	Provider     string   `json:"provider"`
	SourceImages []string `json:"source_images"`
	CreatedAt    string   `json:"created_at"`
}

func (t *GenerateImageTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	prompt := strings.TrimSpace(StringArg(args, "prompt"))
	if prompt == "" {
		return ErrorResult("Error: prompt is required")
	}
	client, err := newImageClient(t.opts)
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	requested := max(1, IntArg(args, "count", 1))
	if requested > t.opts.MaxImagesPerTurn {
		return ErrorResult("Error: count exceeds tools.imageGeneration.maxImagesPerTurn (%d)", t.opts.MaxImagesPerTurn)
	}
	refs, err := referenceImages(env, args["reference_images"])
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	req := imageRequest{
		Prompt: prompt, Model: t.opts.Model, References: refs,
		AspectRatio: orDefault(strings.TrimSpace(StringArg(args, "aspect_ratio")), t.opts.DefaultAspectRatio),
		ImageSize:   orDefault(strings.TrimSpace(StringArg(args, "image_size")), t.opts.DefaultImageSize),
	}
	var artifacts []imageArtifact
	for len(artifacts) < requested {
		images, err := client.generate(ctx, req)
		if err != nil {
			return ErrorResult("Error: %v", err)
		}
		for _, raw := range images {
			a, err := t.save(env, raw, req)
			if err != nil {
				return ErrorResult("Error: %v", err)
			}
			artifacts = append(artifacts, a)
			if len(artifacts) >= requested {
				break
			}
		}
	}
	return t.deliver(ctx, env, artifacts)
}

// deliver sends the images to the current chat; without one (a cron job,
// a subagent) it leaves that to the model, as nanobot always does.
func (t *GenerateImageTool) deliver(ctx context.Context, env Env, artifacts []imageArtifact) Result {
	nextStep := "Use these artifact paths as reference_images for follow-up edits. " +
		"Call the message tool with the artifact paths in the media parameter " +
		"to deliver the images to the user. Keep raw paths internal unless the " +
		"user asks for debug details."
	if t.sender != nil && env.Route.Channel != "" && env.Route.ChatID != "" {
		paths := make([]string, len(artifacts))
		for i, a := range artifacts {
			paths[i] = a.Path
		}
		if _, err := t.sender.SendMessage(ctx, env, env.Route, "", paths); err != nil {
			nextStep = fmt.Sprintf("Sending the images to the chat failed (%v). ", err) + nextStep
		} else {
			nextStep = "The images were sent to the user in this chat; do not send them again. " +
				"Use these artifact paths as reference_images for follow-up edits. Keep raw paths " +
				"internal unless the user asks for debug details."
		}
	}
	out, err := json.Marshal(map[string]any{"artifacts": artifacts, "next_step": nextStep})
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	return TextResult(string(out))
}

// save writes one image and its JSON sidecar under SaveDir/YYYY-MM-DD.
func (t *GenerateImageTool) save(env Env, raw []byte, req imageRequest) (imageArtifact, error) {
	mime, ext := imageKind(raw)
	if ext == "" {
		return imageArtifact{}, errors.New("generated image payload was not a supported image")
	}
	rel := filepath.Clean(t.opts.SaveDir)
	if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return imageArtifact{}, errors.New("save_dir must be a safe relative path")
	}
	now := time.Now()
	dir, err := ResolvePath(Env{Workspace: env.Workspace, RestrictToWorkspace: true, Private: env.Private},
		filepath.Join(rel, now.Format("2006-01-02")))
	if err != nil {
		return imageArtifact{}, fmt.Errorf("save_dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return imageArtifact{}, err
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	a := imageArtifact{
		ID: "img_" + hex.EncodeToString(id), MIME: mime, Prompt: req.Prompt, Model: t.opts.Model,
		Provider: t.opts.Provider, SourceImages: append([]string{}, req.References...), CreatedAt: now.Format(time.RFC3339),
	}
	a.Path = filepath.Join(dir, a.ID+ext)
	if err := os.WriteFile(a.Path, raw, 0o644); err != nil {
		return imageArtifact{}, err
	}
	meta, _ := json.MarshalIndent(a, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, a.ID+".json"), meta, 0o644); err != nil {
		return imageArtifact{}, err
	}
	return a, nil
}

// referenceImages resolves the model's reference paths, which must be
// image files inside the workspace (where received media are kept too).
func referenceImages(env Env, v any) ([]string, error) {
	list, _ := v.([]any)
	var out []string
	for _, item := range list {
		p := strings.TrimSpace(fmt.Sprint(item))
		if p == "" {
			continue
		}
		resolved, err := ResolvePath(Env{Workspace: env.Workspace, RestrictToWorkspace: true, Private: env.Private}, p)
		if err != nil {
			return nil, errors.New("reference_images must be inside the workspace or nanobot media directory")
		}
		raw, err := os.ReadFile(resolved)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("reference image not found: %s", p)
			}
			return nil, fmt.Errorf("reference image is not a file: %s", p)
		}
		if _, ext := imageKind(raw); ext == "" {
			return nil, fmt.Errorf("unsupported reference image: %s", p)
		}
		out = append(out, resolved)
	}
	return out, nil
}

// imageKind is the MIME type and extension of PNG, JPEG, WebP or GIF bytes; "" otherwise.
func imageKind(raw []byte) (mime, ext string) {
	switch mime = http.DetectContentType(raw); mime {
	case "image/png":
		return mime, ".png"
	case "image/jpeg":
		return mime, ".jpg"
	case "image/webp":
		return mime, ".webp"
	case "image/gif":
		return mime, ".gif"
	}
	return "", ""
}

// orDefault is v, or def when v is its type's zero.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
