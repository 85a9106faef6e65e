package qqpeer

// Attachment is a file a user sends.
type Attachment struct {
	ContentType string `json:"content_type"`
	Filename    string `json:"filename"`
	URL         string `json:"url"`
	Size        int    `json:"size"`
}

// C2C dispatches C2C_MESSAGE_CREATE: a user's direct message. It returns the message id.
func (p *Peer) C2C(userOpenID, content string, atts ...Attachment) string {
	id := p.ID()
	p.Dispatch("C2C_MESSAGE_CREATE", map[string]any{"id": id, "content": content,
		"timestamp": "2026-01-01T12:00:00+08:00", "author": map[string]any{"user_openid": userOpenID},
		"attachments": orEmpty(atts)})
	return id
}

// GroupAt dispatches GROUP_AT_MESSAGE_CREATE: a member @-mentions the bot
// in a group (QQ strips the mention and leaves a leading space).
func (p *Peer) GroupAt(groupOpenID, memberOpenID, content string, atts ...Attachment) string {
	id := p.ID()
	p.Dispatch("GROUP_AT_MESSAGE_CREATE", map[string]any{"id": id, "content": " " + content,
		"timestamp": "2026-01-01T12:00:00+08:00", "group_openid": groupOpenID,
		"author": map[string]any{"member_openid": memberOpenID}, "attachments": orEmpty(atts)})
	return id
}

// Group dispatches GROUP_MESSAGE_CREATE: a group message that does not
// mention the bot (sent to bots with the full-group-message permission).
func (p *Peer) Group(groupOpenID, memberOpenID, content string) string {
	id := p.ID()
	p.Dispatch("GROUP_MESSAGE_CREATE", map[string]any{"id": id, "content": content,
		"timestamp": "2026-01-01T12:00:00+08:00", "group_openid": groupOpenID,
		"author": map[string]any{"member_openid": memberOpenID}})
	return id
}

func orEmpty(a []Attachment) []Attachment {
	if a == nil {
		return []Attachment{}
	}
	return a
}
