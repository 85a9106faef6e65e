package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

// SetFileValue changes one key of the config file (keys a dotted camelCase
// path, "agents.defaults.maxToolIterations") and leaves every other byte of
// meaning alone: the file is edited as JSON, never re-encoded from a loaded
// Config, which carries values the environment put there (secrets among
// them). A key the file spells snake_case keeps its spelling. The result
// must load; if it does not, the old file is put back and the error names
// the key. Running workers and gateways pick the change up with their
// config watch.
func SetFileValue(path string, keys []string, value any) error {
	path = ExpandHome(path)
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(old))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if root == nil {
		root = map[string]any{}
	}
	node := root
	for i, k := range keys {
		name := k
		for existing := range node {
			if normKey(existing) == normKey(k) {
				name = existing
			}
		}
		if i == len(keys)-1 {
			node[name] = value
			break
		}
		next, ok := node[name].(map[string]any)
		if !ok {
			next = map[string]any{}
			node[name] = next
		}
		node = next
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("config %s: encode: %w", path, err)
	}
	if err := atomicfile.Write(path, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if _, _, err := Load(path); err != nil {
		if rerr := atomicfile.Write(path, old, 0o600); rerr != nil {
			return fmt.Errorf("config %s: the change broke the file (%v) and putting it back failed: %w", path, err, rerr)
		}
		return err
	}
	return nil
}
