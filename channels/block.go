package channels

import "github.com/nanobot-durable/nanobot/config"

// Block reads a channel's typed config block, channels.<name>, on top of
// its defaults: nanobot's keys, camelCase or snake_case, errors naming the
// key and the file.
func Block[T any](cfg *config.Config, name string, defaults func() T) (T, error) {
	b := defaults()
	if cfg == nil {
		return b, nil
	}
	_, err := cfg.ChannelBlock(name, &b)
	return b, err
}

// CheckBlock is a Spec.Check for a block read with Block.
func CheckBlock[T any](name string, defaults func() T) func(cfg *config.Config) ([]config.Warning, error) {
	return func(cfg *config.Config) ([]config.Warning, error) {
		b := defaults()
		return cfg.ChannelBlock(name, &b)
	}
}

// Validator is a block that checks its own values; where names the file
// (" (path)", or "") for the error.
type Validator interface{ Validate(where string) error }

// ValidBlock is Block, then the block's own check of its values.
func ValidBlock[T Validator](cfg *config.Config, name string, defaults func() T) (T, error) {
	b, err := Block(cfg, name, defaults)
	if err != nil {
		return b, err
	}
	return b, b.Validate(where(cfg))
}

// CheckValidBlock is a Spec.Check for a block read with ValidBlock.
func CheckValidBlock[T Validator](name string, defaults func() T) func(cfg *config.Config) ([]config.Warning, error) {
	return func(cfg *config.Config) ([]config.Warning, error) {
		warnings, err := CheckBlock(name, defaults)(cfg)
		if err != nil {
			return warnings, err
		}
		b, _ := Block(cfg, name, defaults)
		return warnings, b.Validate(where(cfg))
	}
}

// where is " (path)" of the config file, for errors naming a key.
func where(cfg *config.Config) string {
	if cfg == nil || cfg.Path == "" {
		return ""
	}
	return " (" + cfg.Path + ")"
}
