package tools

// NewDreamRegistry is Dream's tool set: read_file, edit_file, apply_patch
// and write_file, whatever the config enables. No shell, no web, no
// message; the Dream profile confines the writes to protocol.DreamWritable.
func NewDreamRegistry() *Registry {
	r := NewRegistry()
	for _, t := range []Tool{readFile{}, editFile{}, applyPatch{}, writeFile{}} {
		r.Register(t)
	}
	return r
}
