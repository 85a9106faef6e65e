package tools

import (
	"context"
	"encoding/json"
	"fmt"
)

const writeFileDescription = "Write content to a file at the given path, replacing the file if it exists. " +
	"Creates parent directories if needed. The write is atomic: readers see either the old or the new file. " +
	"Relative paths are relative to the workspace. To change part of an existing file, prefer edit_file."

const writeFileParameters = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file path to write to"},
    "content": {"type": "string", "description": "The content to write"}
  },
  "required": ["path", "content"]
}`

type writeFile struct{}

func (writeFile) Name() string                { return "write_file" }
func (writeFile) Description() string         { return writeFileDescription }
func (writeFile) Parameters() json.RawMessage { return json.RawMessage(writeFileParameters) }
func (writeFile) Flags() Flags                { return Flags{SideEffects: true} }

func (writeFile) Run(_ context.Context, env Env, args map[string]any) Result {
	resolved, errRes := resolveForTool(env, StringArg(args, "path"))
	if errRes != nil {
		return *errRes
	}
	content := StringArg(args, "content")
	if err := atomicWrite(resolved, []byte(content)); err != nil {
		return ErrorResult("Error writing file: %v", err)
	}
	return TextResult(fmt.Sprintf("Successfully wrote %d bytes to %s", len(content), resolved))
}
