package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// ChannelBlock fills into (a pointer to a struct holding the block's
// defaults) from channels.<name>, a block this package keeps raw in
// Channels.Other for the channel package that owns its type. Keys are as
// forgiving as everywhere else (camelCase or snake_case) and an error names
// the key and the file. A missing block leaves into untouched.
func (c *Config) ChannelBlock(name string, into any) ([]Warning, error) {
	key, raw, ok := c.Channels.block(name)
	if !ok {
		return nil, nil
	}
	src := fileSource(c.Path)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, &Error{Source: src, Key: "channels." + key, Msg: "cannot read the block", Err: err}
	}
	d := &decoder{}
	err := d.decodeValue(src, "channels."+key, tree, reflect.ValueOf(into).Elem(), false)
	return d.warnings, err
}

// BlockName is a channel block's key as it is matched: "Discord",
// "discord" and "dis_cord" name the same block.
func BlockName(key string) string { return normKey(key) }

// block finds channels.<name> however it was spelt; the first spelling in
// sorted order wins, so the choice does not depend on map order.
func (c Channels) block(name string) (string, json.RawMessage, bool) {
	keys := make([]string, 0, len(c.Other))
	for k := range c.Other {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if normKey(k) == normKey(name) {
			return k, c.Other[k], true
		}
	}
	return "", nil, false
}

// SetChannelBlock sets the keys of block (a struct or a map, encoded as
// JSON) in channels.<name>, keeping the block's other keys: how code and
// tests write a channel's block, whose type this package does not know.
func (c *Config) SetChannelBlock(name string, block any) error {
	b, err := json.Marshal(block)
	if err != nil {
		return fmt.Errorf("channels.%s: %w", name, err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return fmt.Errorf("channels.%s is not an object: %w", name, err)
	}
	key, raw, ok := c.Channels.block(name)
	merged := map[string]json.RawMessage{}
	if ok && len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &merged); err != nil {
			return fmt.Errorf("channels.%s is not an object: %w", key, err)
		}
	}
	if !ok {
		key = name
	}
	for k, v := range keys {
		for old := range merged {
			if normKey(old) == normKey(k) {
				delete(merged, old) // one spelling of a key, not two
			}
		}
		merged[k] = v
	}
	out, err := json.Marshal(merged)
	if err != nil {
		return fmt.Errorf("channels.%s: %w", key, err)
	}
	if c.Channels.Other == nil {
		c.Channels.Other = map[string]json.RawMessage{}
	}
	c.Channels.Other[key] = out
	return nil
}
