package config

import (
	"bytes"
	"encoding/json"
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
