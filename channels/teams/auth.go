package teams

import (
	"context"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/nanobot-durable/nanobot/channels/jwks"
)

// botIssuer is who signs the tokens of the Bot Connector's requests.
const botIssuer = "https://api.botframework.com"

// clockLeeway is the skew the Bot Framework allows.
const clockLeeway = 5 * time.Minute

// verifier checks the bearer token of an inbound activity: RS256, signed
// by a key of the connector's OpenID metadata, issued by the connector
// for this app, not expired, and naming the activity's serviceUrl.
type verifier struct {
	keys  *jwks.Keys // the connector's OpenID metadata's
	appID string
}

// tokenClaims are the claims read beside the registered ones.
type tokenClaims struct {
	jwt.RegisteredClaims
	ServiceURL string `json:"serviceurl"`
}

// check is nil when header carries a token the connector issued for this
// bot, for an activity whose serviceUrl is serviceURL.
func (v *verifier) check(ctx context.Context, header, serviceURL string) error {
	var claims tokenClaims
	if err := v.keys.Bearer(ctx, header, &claims, botIssuer, v.appID, clockLeeway); err != nil {
		return err
	}
	if claims.ServiceURL != "" && claims.ServiceURL != serviceURL {
		return fmt.Errorf("token is for serviceUrl %q, the activity names %q", claims.ServiceURL, serviceURL)
	}
	return nil
}
