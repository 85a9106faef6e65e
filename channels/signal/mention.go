package signal

import (
	"sort"
	"strings"
	"sync"
	"unicode/utf16"
)

// mention is an @-mention in a message; Start and Length count UTF-16 units.
type mention struct {
	Number string `json:"number"`
	UUID   string `json:"uuid"`
	Start  int    `json:"start"`
	Length int    `json:"length"`
}

// placeholder is what Signal puts in the text where a mention is.
const placeholder = '\uFFFC'

// accountIDs are the ids of the bot's account: its number, and its uuid
// once a message from the account (another device of it) showed it.
type accountIDs struct {
	mu  sync.Mutex
	ids map[string]bool
}

func newAccountIDs(number string) *accountIDs {
	a := &accountIDs{ids: map[string]bool{}}
	a.learn([]string{number})
	return a
}

func (a *accountIDs) learn(ids []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range ids {
		for _, v := range idVariants(id) {
			a.ids[v] = true
		}
	}
}

// any tells whether one of ids is the account.
func (a *accountIDs) any(ids []string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range ids {
		for _, v := range idVariants(id) {
			if a.ids[v] {
				return true
			}
		}
	}
	return false
}

// addressedBy tells whether a mention addresses the bot: one of its
// account, or one without ids leading the text.
func (a *accountIDs) addressedBy(text string, m mention) bool {
	return a.any([]string{m.Number, m.UUID}) || (m.Number == "" && m.UUID == "" && leading(text, m))
}

// mentioned is nanobot's test of a group message addressing the bot: a
// mention of its account, a mention without ids leading the text, a
// leading placeholder without mention data, or its number in the text.
func (a *accountIDs) mentioned(text string, mentions []mention) bool {
	for _, m := range mentions {
		if a.addressedBy(text, m) {
			return true
		}
	}
	if len(mentions) == 0 && strings.HasPrefix(strings.TrimSpace(text), string(placeholder)) {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for id := range a.ids {
		if strings.HasPrefix(id, "+") && strings.Contains(text, id) {
			return true
		}
	}
	return false
}

// leading tells whether only blanks come before the mention.
func leading(text string, m mention) bool {
	units := utf16.Encode([]rune(text))
	return m.Start >= 0 && m.Start <= len(units) && strings.TrimSpace(string(utf16.Decode(units[:m.Start]))) == ""
}

// stripMentions takes the bot's mentions (and a leading one without ids)
// out of the text the model reads.
func (a *accountIDs) stripMentions(text string, mentions []mention) string {
	units := utf16.Encode([]rune(text))
	var cut []mention
	for _, m := range mentions {
		if m.Start >= 0 && m.Length > 0 && m.Start+m.Length <= len(units) && a.addressedBy(text, m) {
			cut = append(cut, m)
		}
	}
	if len(cut) == 0 {
		trimmed := strings.TrimSpace(text)
		return strings.TrimSpace(strings.TrimPrefix(trimmed, string(placeholder)))
	}
	sort.Slice(cut, func(i, j int) bool { return cut[i].Start > cut[j].Start })
	for _, m := range cut {
		units = append(units[:m.Start], units[m.Start+m.Length:]...)
	}
	return strings.TrimSpace(string(utf16.Decode(units)))
}
