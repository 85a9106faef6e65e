package markdown

// WebHTML renders Markdown as the HTML the web chat shows: the tags of
// MatrixHTML (paragraphs, headings, lists, tables, code blocks with a
// language-x class), text escaped and raw HTML shown as text, links only
// to http, https and mailto, opened in a new tab without a referrer or
// an opener (rel="noopener noreferrer"), images as links.
func WebHTML(md string) string { return renderHTML(md, webFlavor) }

var webFlavor = htmlLinking(` rel="noopener noreferrer" target="_blank"`, "https://", "http://", "mailto:")
