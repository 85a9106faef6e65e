package markdown

// DingTalk renders Markdown for DingTalk's markdown messages, which read a
// subset of it: text, bold, italic, code, links, images, headings (# to
// ######), lists and quotes pass as CommonMark writes them; strikethrough,
// which DingTalk shows as typed, is dropped; tables, which it lacks,
// become aligned text in a code block; task items get a drawn box; a
// bare link stays bare (DingTalk links it itself).
func DingTalk(md string) string { return render(md, dingtalkFlavor) }

// dingtalkFlavor is WeCom's with images shown, bare links and drawn task boxes.
var dingtalkFlavor = derive(wecomFlavor, func(f *flavor) {
	f.image = func(alt, url string) string { return "!" + discordLink(discordBrackets.Replace(alt), url) }
	f.autolink = func(_, label string, _ bool) string { return label }
	f.task = boxTask
})
