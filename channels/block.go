package channels

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/config"
)

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

// StartBlock is ValidBlock for a channel's constructor: a block lacking a
// key the channel cannot start without is refused too. Build warns before
// it gets there, but a channel made otherwise must not start half set.
func StartBlock[T TypedBlock](cfg *config.Config, name string, defaults func() T) (T, error) {
	b, err := ValidBlock(cfg, name, defaults)
	if err != nil {
		return b, err
	}
	if keys := b.Lacking(); len(keys) > 0 {
		return b, fmt.Errorf("%s is not set%s", strings.Join(keys, " and "), where(cfg))
	}
	return b, nil
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

// A TypedBlock is a channel's config block as the registry reads it:
// nanobot's enabled and allowFrom keys, the keys it cannot start without,
// and the check of its own values.
type TypedBlock interface {
	Validator
	On() bool
	Allowed() AllowFrom
	// Lacking names the keys the channel cannot start without (channels.<name>.<key>).
	Lacking() []string
}

// BlockSpec fills a Spec's Enabled, Missing, Check and AllowFrom from the
// channel's typed block; those already set in s stay as they are.
func BlockSpec[T TypedBlock](s Spec, defaults func() T) Spec {
	read := func(cfg *config.Config) (T, bool) {
		b, err := Block(cfg, s.Name, defaults)
		return b, err == nil // a broken block: Check names the key
	}
	if s.Enabled == nil {
		s.Enabled = func(cfg *config.Config) bool { b, ok := read(cfg); return ok && b.On() }
	}
	if s.Missing == nil {
		s.Missing = func(cfg *config.Config) []string {
			if b, ok := read(cfg); ok {
				return b.Lacking()
			}
			return nil
		}
	}
	if s.AllowFrom == nil {
		s.AllowFrom = func(cfg *config.Config) AllowFrom {
			if b, ok := read(cfg); ok {
				return b.Allowed()
			}
			return nil
		}
	}
	if s.Check == nil {
		s.Check = CheckValidBlock(s.Name, defaults)
	}
	return s
}

// Blank names the keys of channels.<name> left blank, from key, value pairs.
func Blank(name string, keyValues ...string) []string {
	var keys []string
	for i := 0; i+1 < len(keyValues); i += 2 {
		if strings.TrimSpace(keyValues[i+1]) == "" {
			keys = append(keys, "channels."+name+"."+keyValues[i])
		}
	}
	return keys
}

// CheckURL is the error for channels.<name>.<key> when raw is set but is not
// an absolute URL of one of the schemes; where names the file.
func CheckURL(name, key, raw, where string, schemes ...string) error {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err == nil && u.Host != "" && slices.Contains(schemes, u.Scheme) {
		return nil
	}
	return fmt.Errorf("channels.%s.%s %q is not a URL (%s)%s", name, key, raw, strings.Join(schemes, ", "), where)
}

// CheckOneOf is the error for channels.<name>.<key> when value is not one
// of allowed; where names the file.
func CheckOneOf(name, key, value, where string, allowed ...string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = strconv.Quote(a)
	}
	list := quoted[len(quoted)-1]
	if len(quoted) > 1 {
		list = strings.Join(quoted[:len(quoted)-1], ", ") + " or " + list
	}
	return fmt.Errorf("channels.%s.%s %q is not %s%s", name, key, value, list, where)
}

// CheckPort is the error for channels.<name>.<key> when port is not a TCP
// port (1-65535; 0 too when zeroOK, for "any free port").
func CheckPort(name, key string, port int, zeroOK bool, where string) error {
	if port > 0 && port <= 65535 || port == 0 && zeroOK {
		return nil
	}
	return fmt.Errorf("channels.%s.%s %d is not a TCP port%s", name, key, port, where)
}

// CheckAtLeast is the error for channels.<name>.<key> when n is below
// least (a count, a buffer, a timeout); where names the file.
func CheckAtLeast(name, key string, n, least int, where string) error {
	if n >= least {
		return nil
	}
	return fmt.Errorf("channels.%s.%s %d must be at least %d%s", name, key, n, least, where)
}

// RegisterBlock registers a channel whose config is its typed block: its
// name, its constructor, how it shows replies and its block's defaults.
func RegisterBlock[T TypedBlock, C Channel](name string, newChannel func(Deps) (C, error), format Format, defaults func() T) {
	Register(BlockSpec(Spec{Name: name, New: func(d Deps) (Channel, error) { return newChannel(d) }, Format: format}, defaults))
}
