package feishu

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Cards are how the bot answers: Markdown in "markdown" elements, headings
// as bold "div"s, tables as "table" elements (nanobot's card format). A
// card holds one table at most (Feishu's error 11310), so a text with more
// is sent as several cards.

// element is one card element, as Feishu's JSON has it.
type element = map[string]any

var (
	tableRE   = regexp.MustCompile(`(?m)((?:^[ \t]*\|.+\|[ \t]*\n)(?:^[ \t]*\|[-:\s|]+\|[ \t]*\n)(?:^[ \t]*\|.+\|[ \t]*\n?)+)`)
	headingRE = regexp.MustCompile(`(?m)^(#{1,6})\s+(.+)$`)
	codeRE    = regexp.MustCompile("(```[\\s\\S]*?```)")
	boldRE    = regexp.MustCompile(`\*\*(.+?)\*\*`)
	boldUnRE  = regexp.MustCompile(`__(.+?)__`)
	italicRE  = regexp.MustCompile(`\*([^*]+?)\*`) // after bold is gone, a lone * pair
	strikeRE  = regexp.MustCompile(`~~(.+?)~~`)
)

// stripFormatting drops Markdown marks where Feishu shows plain text
// (table cells, heading text).
func stripFormatting(s string) string {
	for _, re := range []*regexp.Regexp{boldRE, boldUnRE, italicRE, strikeRE} {
		s = re.ReplaceAllString(s, "$1")
	}
	return s
}

// protectCode swaps fenced code for placeholders, so a table or heading
// inside a code block stays code; restore puts it back in markdown elements.
func protectCode(s string) (string, func([]element)) {
	var blocks []string
	out := codeRE.ReplaceAllStringFunc(s, func(b string) string {
		blocks = append(blocks, b)
		return "\x00CODE" + strconv.Itoa(len(blocks)-1) + "\x00"
	})
	return out, func(els []element) {
		for _, el := range els {
			if el["tag"] != "markdown" {
				continue
			}
			text := el["content"].(string)
			for i, b := range blocks {
				text = strings.Replace(text, "\x00CODE"+strconv.Itoa(i)+"\x00", b, 1)
			}
			el["content"] = text
		}
	}
}

// cardElements splits Markdown into markdown, heading and table elements;
// past maxTables (-1: no limit) a table stays Markdown text.
func cardElements(md string, maxTables int) []element {
	protected, restore := protectCode(md)
	var els []element
	last := 0
	for _, m := range tableRE.FindAllStringSubmatchIndex(protected, -1) {
		if before := protected[last:m[0]]; strings.TrimSpace(before) != "" {
			els = append(els, headingElements(before)...)
		}
		t := protected[m[2]:m[3]]
		if el := tableElement(t); el != nil && maxTables != 0 {
			maxTables--
			els = append(els, el)
		} else {
			els = append(els, element{"tag": "markdown", "content": t})
		}
		last = m[1]
	}
	if rest := protected[last:]; strings.TrimSpace(rest) != "" {
		els = append(els, headingElements(rest)...)
	}
	restore(els)
	if len(els) == 0 {
		return []element{{"tag": "markdown", "content": md}}
	}
	return els
}

// headingElements turns headings into bold divs between markdown elements.
func headingElements(md string) []element {
	var els []element
	last := 0
	for _, m := range headingRE.FindAllStringSubmatchIndex(md, -1) {
		if before := strings.TrimSpace(md[last:m[0]]); before != "" {
			els = append(els, element{"tag": "markdown", "content": before})
		}
		text := stripFormatting(strings.TrimSpace(md[m[4]:m[5]]))
		if text != "" {
			text = "**" + text + "**"
		}
		els = append(els, element{"tag": "div", "text": element{"tag": "lark_md", "content": text}})
		last = m[1]
	}
	if rest := strings.TrimSpace(md[last:]); rest != "" {
		els = append(els, element{"tag": "markdown", "content": rest})
	}
	if len(els) == 0 {
		return []element{{"tag": "markdown", "content": md}}
	}
	return els
}

// tableElement is a Markdown table as a card table (nil if it is not one).
func tableElement(md string) element {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(md), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) < 3 {
		return nil
	}
	cells := func(l string) []string {
		parts := strings.Split(strings.Trim(l, "|"), "|")
		for i := range parts {
			parts[i] = stripFormatting(strings.TrimSpace(parts[i]))
		}
		return parts
	}
	headers := cells(lines[0])
	columns := make([]element, len(headers))
	for i, h := range headers {
		columns[i] = element{"tag": "column", "name": "c" + strconv.Itoa(i), "display_name": h, "width": "auto"}
	}
	rows := make([]element, 0, len(lines)-2)
	for _, l := range lines[2:] {
		r := cells(l)
		row := element{}
		for i := range headers {
			v := ""
			if i < len(r) {
				v = r[i]
			}
			row["c"+strconv.Itoa(i)] = v
		}
		rows = append(rows, row)
	}
	return element{"tag": "table", "page_size": len(rows) + 1, "columns": columns, "rows": rows}
}

// splitByTables groups elements so each group has one table at most.
func splitByTables(els []element) [][]element {
	var groups [][]element
	var cur []element
	tables := 0
	for _, el := range els {
		if el["tag"] == "table" {
			if tables >= 1 {
				groups = append(groups, cur)
				cur, tables = nil, 0
			}
			tables++
		}
		cur = append(cur, el)
	}
	if len(cur) > 0 || len(groups) == 0 {
		groups = append(groups, cur)
	}
	return groups
}

// cards are the interactive cards showing md, one per table.
func cards(md string) []string {
	var out []string
	for _, g := range splitByTables(cardElements(md, -1)) {
		out = append(out, cardJSON(g))
	}
	return out
}

// oneCard shows md in a single card (a streamed message): one table drawn.
func oneCard(md string) string { return cardJSON(cardElements(md, 1)) }

// cardJSON is a card's content; update_multi lets the bot update it for
// everyone in the chat (streaming).
func cardJSON(els []element) string {
	return jsonString(map[string]any{"config": map[string]any{"wide_screen_mode": true, "update_multi": true}, "elements": els})
}

// jsonString is v as JSON text, as message contents are sent.
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
