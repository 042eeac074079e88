package httpapi

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
)

// authenticate requires a valid bearer token or API key, and puts the
// caller into the request context.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.principalOf(r)
		if err != nil {
			writeError(w, r, s.log, s.refusedCredential(r, err))
			return
		}
		if st := stateOf(r.Context()); st != nil {
			st.principal = p
		}
		next.ServeHTTP(w, r)
	})
}

// refusedCredential records a request refused for its credential (err,
// from principalOf), and is the 401 to answer it with.
func (s *Server) refusedCredential(r *http.Request, err error) error {
	s.recordAuth(r, domain.AuthorizationRecorded{Action: domain.ActionTokenRejected, Subject: "anonymous",
		Detail: r.Method + " " + r.URL.Path + ": " + domain.ErrorMessage(err)})
	return withHeader(err, "WWW-Authenticate", `Bearer realm="cargostream", error="invalid_token", error_description="`+
		strings.ReplaceAll(domain.ErrorMessage(err), `"`, "'")+`"`)
}

// principalOf finds who is calling. Its errors are all invalid_token
// *domain.Error values with a reason the caller can act on.
func (s *Server) principalOf(r *http.Request) (domain.Principal, error) {
	// Each header is sent once. Of two lines the first was taken, which a
	// proxy in front may read otherwise (checking the last, or adding its
	// own): the request ran as someone that proxy never checked.
	// A copy: DeleteFunc moves the values of the slice it is given, here
	// the request's own header.
	keys := slices.DeleteFunc(slices.Clone(r.Header.Values("X-Api-Key")), func(k string) bool { return k == "" })
	if auths := r.Header.Values("Authorization"); len(auths) > 1 || len(keys) > 1 {
		return domain.Principal{}, domain.Errorf(domain.InvalidToken, "send one credential: this request has Authorization %d times and x-api-key %d times", len(auths), len(keys))
	}
	if len(keys) == 1 { // an empty line is no key
		k, ok := s.identity.APIKeyByHash(commands.HashAPIKey(keys[0]))
		if !ok || k.Revoked {
			return domain.Principal{}, domain.Errorf(domain.InvalidToken, "the API key is not valid")
		}
		return s.orgPrincipal(domain.InvalidToken, "apikey:"+k.KeyID, k.OrganizationID)
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return domain.Principal{}, domain.Errorf(domain.InvalidToken, "authentication required: send Authorization: Bearer <token> or x-api-key")
	}
	scheme, raw, _ := strings.Cut(h, " ")
	raw = strings.TrimSpace(raw)
	if !strings.EqualFold(scheme, "Bearer") || raw == "" {
		return domain.Principal{}, domain.Errorf(domain.InvalidToken, "the Authorization header must be Bearer <token>")
	}
	claims, err := s.tokens.Verify(raw, time.Now())
	if err != nil {
		s.log.DebugContext(r.Context(), "token rejected", "request_id", requestID(r.Context()), "err", err)
		var refusal *domain.Error
		if errors.As(err, &refusal) {
			return domain.Principal{}, refusal
		}
		return domain.Principal{}, domain.Errorf(domain.InvalidToken, "the access token is invalid or expired")
	}
	p := claims.Principal
	// The demo claim marks the tokens of the demo's own credentials; a
	// token of a credential an admin added to a demo organisation has
	// none, and its organisation closes it.
	if claims.Demo && !s.opts.Demo {
		return domain.Principal{}, domain.Errorf(domain.InvalidToken, "%s", demoDisabled)
	}
	if why := s.identity.TokenRefusal(p.Subject, p.OrganizationID, claims.ID, claims.IssuedAt); why != "" {
		return domain.Principal{}, domain.Errorf(domain.InvalidToken, "%s", why)
	}
	if _, _, err := s.openOrganization(domain.InvalidToken, p.OrganizationID); err != nil {
		return domain.Principal{}, err
	}
	return p, nil
}

// demoDisabled is why every credential of a demo organisation is refused
// while the service runs without demo mode: set CARGO_DEMO=false, or left
// out where it is off by default (with CARGO_NATS_URL, or off loopback),
// where naming "CARGO_DEMO=false" sent the operator looking for a setting
// no one had made.
const demoDisabled = "the demo organisations are disabled: this service runs with demo mode off (CARGO_DEMO)"

// openOrganization looks organisation orgID up (ok false when there is
// none), and refuses, as code, a credential of it while it is disabled or
// deleted, or a demo one and demo mode is off (see
// domain.Organization.UsableInDemoMode).
func (s *Server) openOrganization(code domain.ErrorClass, orgID string) (o domain.Organization, ok bool, err error) {
	o, ok = s.identity.Organization(orgID)
	switch {
	case ok && !o.Status.Active():
		return o, ok, domain.Errorf(code, "the credential's organisation is %s", o.Status.Shown())
	case ok && !o.UsableInDemoMode(s.opts.Demo):
		return o, ok, domain.Errorf(code, "%s", demoDisabled)
	}
	return o, ok, nil
}

// orgPrincipal is the caller, subject, acting for organisation orgID: a
// credential of a closed demo organisation is refused as code.
func (s *Server) orgPrincipal(code domain.ErrorClass, subject, orgID string) (domain.Principal, error) {
	o, ok, err := s.openOrganization(code, orgID)
	switch {
	case err != nil:
		return domain.Principal{}, err
	case !ok:
		return domain.Principal{}, domain.Errorf(domain.InvalidToken, "the credential's organisation does not exist")
	}
	return o.Principal(subject), nil
}

// onlyFor serves h to callers of roles, and refuses the others with 403
// before anything else is looked at. The refusal names the roles the
// route is open to, as the route lists them: a caller learns whose
// operation it is (an airline filing an RFQ: a forwarder's), not only
// that it is not theirs.
func onlyFor(roles []domain.Role, h handlerFunc) handlerFunc {
	names := make([]string, len(roles))
	for i, role := range roles {
		names[i] = string(role) + "s"
	}
	openTo := names[len(names)-1]
	if len(names) > 1 {
		openTo = strings.Join(names[:len(names)-1], ", ") + " and " + openTo
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		p := principal(r.Context())
		if !slices.Contains(roles, p.Role) {
			return domain.Errorf(domain.Forbidden, "this operation is open to %s only, not to the %s role", openTo, p.Role)
		}
		return h(w, r)
	}
}
