package webhooks

import (
	"errors"

	"github.com/cargostream/cargostream/domain"
)

// Registration is the command that registers a subscription to rawURL for
// events, signed with secret, or with one made for it when secret is
// empty: the URL and events as domain.ValidateWebhook checks them (the URL
// against the dispatcher's Guard), the secret as ValidSecret does, every
// problem of them at once; and the secret, and the user info of the URL
// (a receiver's password), sealed as the dispatcher opens them, never kept
// as sent. generated is the secret made, to be shown once.
func (d *Dispatcher) Registration(rawURL string, events []string, secret string) (c domain.RegisterWebhook, generated string, err error) {
	err = domain.ValidateWebhook(rawURL, events, d.Guard.Check)
	if secret == "" {
		secret = NewSecret()
		generated = secret
	} else if why := ValidSecret(secret); why != "" {
		var p domain.Problems
		if invalid := (*domain.Error)(nil); errors.As(err, &invalid) {
			p = invalid.Fields
		}
		p.Add("secret", domain.CodeInvalidFormat, "%s", why)
		err = p.Err()
	}
	if err != nil {
		return domain.RegisterWebhook{}, "", err
	}
	c = domain.RegisterWebhook{Events: events, SealedSecret: d.Sealer.Seal(secret)}
	var userInfo string
	if c.URL, userInfo = domain.SplitUserInfo(rawURL); userInfo != "" {
		c.SealedUserInfo = d.Sealer.Seal(userInfo)
	}
	return c, generated, nil
}
