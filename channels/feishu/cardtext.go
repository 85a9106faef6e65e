package feishu

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Interactive cards users send (or forward) are read as nanobot reads
// them: titles, markdown and text, links, buttons, notes, columns and
// tables, one piece per line; a rendered card's user_dsl is its richest source.

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func arr(v any) []any          { a, _ := v.([]any); return a }
func str(v any) string         { s, _ := v.(string); return s }

// textOf is a {content}/{text} object's text, or a plain string.
func textOf(v any) string {
	if m := obj(v); m != nil {
		if s := str(m["content"]); s != "" {
			return s
		}
		return str(m["text"])
	}
	return str(v)
}

// cardText is a card's text, one piece per line.
func cardText(card map[string]any) string {
	return strings.TrimSpace(strings.Join(cardParts(card), "\n"))
}

func cardParts(card map[string]any) []string {
	var parts []string
	if dsl := str(card["user_dsl"]); strings.TrimSpace(dsl) != "" {
		var inner map[string]any
		if json.Unmarshal([]byte(dsl), &inner) == nil {
			if p := cardParts(inner); len(p) > 0 {
				return p
			}
		}
	}
	if t := textOf(card["title"]); t != "" {
		parts = append(parts, "title: "+t)
	}
	for _, el := range arr(card["elements"]) {
		if row := arr(el); row != nil { // nested rows: [[{tag…}], …]
			for _, e := range row {
				parts = append(parts, elementParts(e)...)
			}
			continue
		}
		parts = append(parts, elementParts(el)...)
	}
	for _, el := range arr(obj(card["body"])["elements"]) { // schema 2.0
		parts = append(parts, elementParts(el)...)
	}
	if inner := obj(card["card"]); len(inner) > 0 {
		parts = append(parts, cardParts(inner)...)
	}
	if t := textOf(obj(card["header"])["title"]); t != "" {
		parts = append(parts, "title: "+t)
	}
	return parts
}

func elementParts(v any) []string {
	el := obj(v)
	if el == nil {
		return nil
	}
	var parts []string
	add := func(s string) {
		if strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
	}
	switch str(el["tag"]) {
	case "markdown", "lark_md", "plain_text":
		add(str(el["content"]))
	case "text":
		add(str(el["text"]))
	case "div":
		add(textOf(el["text"]))
		for _, f := range arr(el["fields"]) {
			add(textOf(obj(f)["text"]))
		}
	case "a":
		if h := str(el["href"]); h != "" {
			add("link: " + h)
		}
		add(str(el["text"]))
	case "button":
		add(textOf(el["text"]))
		u := str(el["url"])
		if u == "" {
			u = str(obj(el["multi_url"])["url"])
		}
		if u != "" {
			add("link: " + u)
		}
	case "img":
		alt := textOf(el["alt"])
		if alt == "" {
			alt = "[image]"
		}
		add(alt)
	case "column_set":
		for _, col := range arr(el["columns"]) {
			for _, e := range arr(obj(col)["elements"]) {
				parts = append(parts, elementParts(e)...)
			}
		}
	case "table":
		parts = append(parts, tableParts(el)...)
	default: // note and the rest: their children
		for _, e := range arr(el["elements"]) {
			parts = append(parts, elementParts(e)...)
		}
	}
	return parts
}

func tableParts(el map[string]any) []string {
	var names, headers, parts []string
	for _, c := range arr(el["columns"]) {
		if n := str(obj(c)["name"]); n != "" {
			h := str(obj(c)["display_name"])
			if h == "" {
				h = n
			}
			names, headers = append(names, n), append(headers, h)
		}
	}
	if len(names) == 0 {
		return nil
	}
	parts = append(parts, strings.Join(headers, " | "))
	for _, r := range arr(el["rows"]) {
		row := obj(r)
		var vals []string
		for _, n := range names {
			switch v := row[n].(type) {
			case nil:
				vals = append(vals, "")
			case []any:
				var items []string
				for _, it := range v {
					if it != nil {
						items = append(items, strings.TrimSpace(fmt.Sprint(it)))
					}
				}
				vals = append(vals, strings.Join(items, " "))
			default:
				vals = append(vals, strings.TrimSpace(fmt.Sprint(v)))
			}
		}
		if line := strings.TrimSpace(strings.Join(vals, " | ")); line != "" {
			parts = append(parts, line)
		}
	}
	return parts
}
