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
