package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// rawServerEnv makes the test binary a misbehaving stdio MCP server that
// speaks JSON-RPC by hand, so replies no SDK would send can be sent; its
// value is the server's tools/list mode (see rawToolsList).
const rawServerEnv = "NANOBOT_MCP_RAW_SERVER"

// rpcMessage is one JSON-RPC message as the raw server reads it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"params"`
}

// rawAction is what the raw server does after writing its reply.
type rawAction int

const (
	rawContinue rawAction = iota
	rawDie                // the process exits / the HTTP connection is cut
)

// hugeText is the size of the "huge" tool's result.
const hugeText = 4 << 20

// rawTools are the tools of the misbehaving server, each named for how it misbehaves.
var rawTools = []string{
	"echo", "bad_json", "not_json", "wrong_id", "no_result", "null_result", "result_is_string", "rpc_error",
	"error_and_result", "huge", "non_utf8", "unknown_content", "content_not_array", "content_missing",
	"image_without_data", "die", "die_midline", "server_request", "notification_flood",
}

// rawReply is the raw server's answer to one message: the lines to write
// (each one JSON-RPC message, or garbage) and what to do next.
func rawReply(mode string, m rpcMessage) ([]string, rawAction) {
	id := string(m.ID)
	result := func(v string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + v + `}` }
	text := func(s string) string {
		b, _ := json.Marshal(s)
		return result(`{"content":[{"type":"text","text":` + string(b) + `}]}`)
	}
	switch m.Method {
	case "initialize":
		return []string{result(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)}, rawContinue
	case "ping":
		return []string{result(`{}`)}, rawContinue
	case "tools/list":
		var list bytes.Buffer
		if err := json.Compact(&list, []byte(rawToolsList(mode))); err != nil {
			panic(err)
		}
		return []string{result(list.String())}, rawContinue
	case "tools/call":
	default:
		if len(m.ID) == 0 {
			return nil, rawContinue // a notification
		}
		return []string{`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"method not found"}}`}, rawContinue
	}
	switch m.Params.Name {
	case "echo":
		return []string{text(fmt.Sprintf("echo: %v", m.Params.Arguments["message"]))}, rawContinue
	case "bad_json":
		return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"cut`}, rawContinue
	case "not_json":
		return []string{"this is not JSON-RPC at all"}, rawContinue
	case "wrong_id":
		return []string{`{"jsonrpc":"2.0","id":"not-` + strings.Trim(id, `"`) + `","result":{"content":[{"type":"text","text":"for someone else"}]}}`}, rawContinue
	case "no_result":
		return []string{`{"jsonrpc":"2.0","id":` + id + `}`}, rawContinue
	case "null_result":
		return []string{result(`null`)}, rawContinue
	case "result_is_string":
		return []string{result(`"hello"`)}, rawContinue
	case "rpc_error":
		return []string{`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"kaput"}}`}, rawContinue
	case "error_and_result":
		return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[]},"error":{"code":-32603,"message":"both"}}`}, rawContinue
	case "huge":
		return []string{text(strings.Repeat("x", hugeText))}, rawContinue
	case "non_utf8":
		return []string{result("{\"content\":[{\"type\":\"text\",\"text\":\"bad \xff\xfe bytes\"}]}")}, rawContinue
	case "unknown_content":
		return []string{result(`{"content":[{"type":"hologram","data":"x"},{"type":"text","text":"still here"}]}`)}, rawContinue
	case "content_not_array":
		return []string{result(`{"content":"hello"}`)}, rawContinue
	case "content_missing":
		return []string{result(`{}`)}, rawContinue
	case "image_without_data":
		return []string{result(`{"content":[{"type":"image"}]}`)}, rawContinue
	case "die":
		return nil, rawDie
	case "die_midline":
		return []string{`{"jsonrpc":"2.0","id":` + id + `,"resu`}, rawDie
	case "server_request": // the server asks the client something first
		return []string{`{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`, text("asked")}, rawContinue
	case "notification_flood":
		lines := make([]string, 0, 1001)
		for i := range 1000 {
			lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":%d}}`, i))
		}
		return append(lines, text("flooded")), rawContinue
	}
	return []string{`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"unknown tool"}}`}, rawContinue
}

// rawToolsList is the tools/list result of a mode: "tools" lists the raw
// tools; "schemas" lists broken definitions beside one good tool; "garbage"
// is a result whose tools are not a list.
func rawToolsList(mode string) string {
	switch mode {
	case "schemas":
		return `{"tools":[
			{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}},
			{"name":"schema_string","inputSchema":"not a schema"},
			{"name":"schema_array_type","inputSchema":{"type":"array","items":{"type":"string"}}},
			{"name":"schema_number_type","inputSchema":{"type":5}},
			{"name":"schema_null","inputSchema":null},
			{"name":"props_not_object","inputSchema":{"type":"object","properties":"x"}},
			{"name":"required_not_list","inputSchema":{"type":"object","required":"message"}},
			{"name":"bad_ref","inputSchema":{"type":"object","properties":{"a":{"$ref":"#/nowhere"}}}},
			{"name":"","inputSchema":{"type":"object"}},
			{"name":"echo","inputSchema":{"type":"object"},"description":"a second echo"},
			{"name":"` + strings.Repeat("long", 100) + `","inputSchema":{"type":"object"}},
			{"name":"spaces and ünïcödé/名前","inputSchema":{"type":"object"}},
			{"name":"no_schema"}
		]}`
	case "garbage":
		return `{"tools":"none"}`
	}
	var defs []string
	for _, name := range rawTools {
		defs = append(defs, `{"name":"`+name+`","inputSchema":{"type":"object"}}`)
	}
	return `{"tools":[` + strings.Join(defs, ",") + `]}`
}

// serveRawStdio is the stdio raw server: one message per line in, replies out.
func serveRawStdio(mode string) {
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m rpcMessage
		if json.Unmarshal(line, &m) != nil || m.Method == "" {
			continue // our own replies to the server's requests, or noise
		}
		lines, action := rawReply(mode, m)
		for _, l := range lines {
			if action == rawDie {
				_, _ = os.Stdout.WriteString(l) // no newline: the message is cut
				continue
			}
			_, _ = os.Stdout.WriteString(l + "\n")
		}
		if action == rawDie {
			fmt.Fprintln(os.Stderr, "raw server: dying mid-call on purpose")
			os.Exit(3)
		}
	}
}

// rawHTTPHandler is the streamable HTTP raw server; the path's last
// element is the tools/list mode.
func rawHTTPHandler(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "only POST", http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m rpcMessage
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if len(m.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	mode := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	lines, action := rawReply(mode, m)
	if action == rawDie {
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("raw server: no hijacker")
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			panic(err)
		}
		if len(lines) > 0 { // headers promise more than comes
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n" + lines[0])
			_ = buf.Flush()
		}
		_ = conn.Close()
		return
	}
	// Over HTTP the last line is the reply; the server's own requests and
	// notifications would need a stream, so only the reply is sent.
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.Copy(w, bytes.NewBufferString(lines[len(lines)-1]))
}
