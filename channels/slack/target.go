package slack

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/slack-go/slack"

	"github.com/nanobot-durable/nanobot/channels"
)

var (
	slackIDRe     = regexp.MustCompile(`^[CDGUW][A-Z0-9]+$`) // channel names are lower case: upper case is an id
	channelRefRe  = regexp.MustCompile(`^<#([A-Z0-9]+)(?:\|[^>]*)?>$`)
	userRefRe     = regexp.MustCompile(`^<@([A-Z0-9]+)(?:\|[^>]*)?>$`)
	resolvedLimit = 1000
)

// resolveTarget turns the chat a reply names into a conversation id, as
// nanobot does for the message tool: a channel id as is; a user id, a
// <@user> mention or an @handle becomes the DM with that user; #name or a
// bare name is a channel the bot can see (then a user of that name).
func (c *Channel) resolveTarget(ctx context.Context, target string) (string, error) {
	target = strings.TrimSpace(target)
	if m := channelRefRe.FindStringSubmatch(target); m != nil {
		return m[1], nil
	}
	if m := userRefRe.FindStringSubmatch(target); m != nil {
		return c.openDM(ctx, m[1])
	}
	if slackIDRe.MatchString(target) {
		if target[0] == 'U' || target[0] == 'W' {
			return c.openDM(ctx, target)
		}
		return target, nil
	}
	if target == "" {
		return "", &channels.SendError{Err: fmt.Errorf("slack: no chat to send to"), Permanent: true}
	}
	if v, ok := c.cachedTarget(target); ok {
		return v, nil
	}
	var id string
	var err error
	switch {
	case strings.HasPrefix(target, "#"):
		id, err = c.channelByName(ctx, target[1:])
	case strings.HasPrefix(target, "@"):
		id, err = c.dmByHandle(ctx, target[1:])
	default:
		if id, err = c.channelByName(ctx, target); err == nil && id == "" {
			id, err = c.dmByHandle(ctx, target)
		}
	}
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", &channels.SendError{Permanent: true, Err: fmt.Errorf(
			"slack: %q is neither a channel the bot is in nor a user; use '#channel', '@user' or an id", target)}
	}
	c.cacheTarget(target, id)
	return id, nil
}

func normalName(s string) string {
	return strings.ToLower(strings.TrimLeft(strings.TrimSpace(s), "#@"))
}

func (c *Channel) cachedTarget(name string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.targets[normalName(name)]
	return v, ok
}

func (c *Channel) cacheTarget(name, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.targets) >= resolvedLimit {
		clear(c.targets)
	}
	c.targets[normalName(name)] = id
}

func (c *Channel) openDM(ctx context.Context, user string) (string, error) {
	ch, _, _, err := c.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}, ReturnIM: true})
	if err != nil {
		return "", sendError("conversations.open", err)
	}
	if ch == nil || ch.ID == "" {
		return "", &channels.SendError{Err: fmt.Errorf("slack: no direct message with %s could be opened", user), Permanent: true}
	}
	return ch.ID, nil
}

// channelByName finds a channel the bot can see; "" when there is none.
func (c *Channel) channelByName(ctx context.Context, name string) (string, error) {
	want := normalName(name)
	cursor := ""
	for {
		chans, next, err := c.api.GetConversationsContext(ctx, &slack.GetConversationsParameters{
			Cursor: cursor, ExcludeArchived: true, Limit: 200, Types: []string{"public_channel", "private_channel"},
		})
		if err != nil {
			return "", sendError("conversations.list", err)
		}
		for _, ch := range chans {
			if normalName(ch.Name) == want {
				return ch.ID, nil
			}
		}
		if next == "" {
			return "", nil
		}
		cursor = next
	}
}

// dmByHandle finds a user by name, display name or real name and opens
// the DM with them; "" when there is no such user.
func (c *Channel) dmByHandle(ctx context.Context, handle string) (string, error) {
	want := normalName(handle)
	users, err := c.api.GetUsersContext(ctx)
	if err != nil {
		return "", sendError("users.list", err)
	}
	for _, u := range users {
		for _, n := range []string{u.Name, u.Profile.DisplayName, u.Profile.DisplayNameNormalized, u.RealName, u.Profile.RealNameNormalized} {
			if n != "" && normalName(n) == want {
				return c.openDM(ctx, u.ID)
			}
		}
	}
	return "", nil
}
