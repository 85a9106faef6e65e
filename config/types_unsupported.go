package config

// nanobot's sections this build reads without acting on them: each key is
// tagged `unused:"why"`, so a value other than nanobot's default is named
// in a warning at load and in `nanobot status`, never silently dropped.

// CLIAppsTool is tools.cliApps, nanobot's installer of command-line apps.
type CLIAppsTool struct {
	Enable            bool `json:"enable" unused:"there is no cli_apps tool in this build"`
	InstallTimeout    int  `json:"installTimeout" unused:"there is no cli_apps tool in this build"`
	RunTimeout        int  `json:"runTimeout" unused:"there is no cli_apps tool in this build"`
	CatalogTTLSeconds int  `json:"catalogTtlSeconds" unused:"there is no cli_apps tool in this build"`
}

// ImageGenerationTool is tools.imageGeneration.
type ImageGenerationTool struct {
	Enabled            bool   `json:"enabled" unused:"there is no image generation in this build"`
	Provider           string `json:"provider" unused:"there is no image generation in this build"`
	Model              string `json:"model" unused:"there is no image generation in this build"`
	DefaultAspectRatio string `json:"defaultAspectRatio" unused:"there is no image generation in this build"`
	DefaultImageSize   string `json:"defaultImageSize" unused:"there is no image generation in this build"`
	MaxImagesPerTurn   int    `json:"maxImagesPerTurn" unused:"there is no image generation in this build"`
	SaveDir            string `json:"saveDir" unused:"there is no image generation in this build"`
}

func defaultCLIApps() CLIAppsTool {
	return CLIAppsTool{Enable: true, InstallTimeout: 300, RunTimeout: 60, CatalogTTLSeconds: 3600}
}

func defaultImageGeneration() ImageGenerationTool {
	return ImageGenerationTool{Provider: "openrouter", Model: "openai/gpt-5.4-image-2", DefaultAspectRatio: "1:1",
		DefaultImageSize: "1K", MaxImagesPerTurn: 4, SaveDir: "generated"}
}
