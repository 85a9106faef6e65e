package markdown

// MatrixHTML renders Markdown as the HTML a Matrix message carries in
// formatted_body (format org.matrix.custom.html), within the tags and
// attributes the spec lets clients show: strong, em, del, code, pre with
// the code's language, a, blockquote, ul/ol/li, h1-h6, table, br, p, hr.
// Text is escaped, raw HTML is shown as text, images are links (Matrix
// shows only mxc:// images), and a link of another scheme than the spec's
// (http, https, ftp, mailto, magnet) is shown as "label (url)". Send
// PlainText of the same Markdown as the body.
func MatrixHTML(md string) string { return renderHTML(md, matrixFlavor) }

var matrixFlavor = htmlFlavor("https://", "http://", "ftp://", "mailto:", "magnet:")
