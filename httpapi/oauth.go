package httpapi

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
	"golang.org/x/crypto/bcrypt"
)

// tokenRequest is the spec's JSON token request; the same fields arrive
// under their RFC 6749 names in a form post.
type tokenRequest struct {
	GrantType    string `json:"grantType"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	Username     string `json:"username"`
	Password     string `json:"password"`
}

// tokenResponse is the spec's token response, and the same token under
// the names of RFC 6749 §5.1, which OAuth client libraries read.
type tokenResponse struct {
	AccessToken string `json:"accessToken"`
	TokenType   string `json:"tokenType"`
	ExpiresIn   int    `json:"expiresIn"` // seconds
	rfc6749TokenResponse
}

type rfc6749TokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
}

func newTokenResponse(token string, ttl time.Duration) tokenResponse {
	seconds := int(ttl.Seconds())
	return tokenResponse{AccessToken: token, TokenType: "Bearer", ExpiresIn: seconds,
		rfc6749TokenResponse: rfc6749TokenResponse{AccessToken: token, TokenType: "Bearer", ExpiresIn: seconds}}
}

func (s *Server) handleToken() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := readTokenRequest(r)
		if err != nil {
			return err
		}
		if err := s.limitTokenRequests(r, w, claimedSubject(req)); err != nil {
			return err
		}
		// A replica behind a secret rotation, a disable or a revocation
		// made through another must not grant a token on a credential
		// that was already withdrawn (its token would be stamped after
		// the withdrawal, and outlive it).
		if err := s.caughtUp(r, "whether the credential still holds; no token was issued"); err != nil {
			return err
		}
		var g grant
		switch req.GrantType {
		case "client_credentials":
			g, err = s.clientGrant(r, req)
		case "password":
			g, err = s.passwordGrant(r, req)
		case "":
			return domain.Errorf(domain.InvalidRequest, "grantType is required: client_credentials or password")
		default:
			return domain.Errorf(domain.UnsupportedGrantType, "grantType %q is not supported: use client_credentials or password", req.GrantType)
		}
		if err != nil {
			if domain.ErrorCode(err) == domain.InvalidGrant {
				subject, orgID := s.claimant(req)
				s.recordAuth(r, domain.AuthorizationRecorded{Action: domain.ActionLoginFailed, Subject: subject,
					OrganizationID: orgID, Detail: req.GrantType + ": " + domain.ErrorMessage(err)})
			}
			return err
		}
		token, ttl, err := s.tokens.Issue(g.principal, g.demo, g.issuedAt)
		if err != nil {
			return err
		}
		s.recordAuth(r, domain.AuthorizationRecorded{Action: domain.ActionTokenIssued, Subject: g.principal.Subject,
			OrganizationID: g.principal.OrganizationID, Detail: req.GrantType})
		w.Header().Set("Pragma", "no-cache")
		writeJSON(w, http.StatusOK, newTokenResponse(token, ttl))
		return nil
	}
}

// readTokenRequest accepts the spec's JSON body, an OAuth form post, and
// client credentials in HTTP Basic authentication.
func readTokenRequest(r *http.Request) (tokenRequest, error) {
	var req tokenRequest
	switch mt := mediaType(r); {
	case isJSON(mt):
		if err := decodeJSON(r, &req); err != nil {
			return req, err
		}
	case mt == "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return req, readError(err)
		}
		f := r.PostForm
		var p domain.Problems
		for _, name := range []string{"grant_type", "client_id", "client_secret", "username", "password"} {
			if len(f[name]) > 1 { // RFC 6749 §3.2: which one would count?
				return req, domain.Errorf(domain.InvalidRequest, "the parameter %s is given %d times; send it once", name, len(f[name]))
			}
			checkPrintable(&p, name, f.Get(name))
		}
		if err := p.Err(); err != nil {
			return req, err
		}
		// curl -d sends this content type unless told otherwise: the
		// spec's JSON body then reads as one parameter named after it,
		// and "grantType is required" would puzzle whoever sent one.
		if len(f) == 1 && f.Get("grant_type") == "" {
			for name := range f {
				if strings.HasPrefix(strings.TrimSpace(name), "{") {
					return req, domain.Errorf(domain.InvalidRequest, "the body is JSON but its Content-Type is application/x-www-form-urlencoded (which curl -d sends unless told otherwise): send Content-Type: application/json")
				}
			}
		}
		req = tokenRequest{GrantType: f.Get("grant_type"), ClientID: f.Get("client_id"), ClientSecret: f.Get("client_secret"),
			Username: f.Get("username"), Password: f.Get("password")}
	default:
		return req, errorf(codeUnsupportedMedia, "send the token request as application/json or application/x-www-form-urlencoded")
	}
	// One header, as any other endpoint takes one credential (see
	// principalOf): of two lines the first was taken, so that a request
	// whose other line a proxy in front had checked, or added, got a
	// token for the first's client.
	if auths := r.Header.Values("Authorization"); len(auths) > 1 {
		return req, domain.Errorf(domain.InvalidClient, "send one Authorization header: this request has it %d times", len(auths))
	}
	// The spec's examples send a bearer value to this endpoint too; only
	// Basic carries client credentials.
	if h := r.Header.Get("Authorization"); len(h) > 6 && strings.EqualFold(h[:6], "Basic ") {
		id, secret, ok := r.BasicAuth()
		if ok {
			// RFC 6749 §2.3.1: both parts are form-encoded.
			id, err1 := url.QueryUnescape(id)
			secret, err2 := url.QueryUnescape(secret)
			ok = err1 == nil && err2 == nil
			if ok && req.ClientID != "" && req.ClientID != id {
				return req, domain.Errorf(domain.InvalidClient, "the client id in the Basic header and the body differ")
			}
			// Nor may the secret: the header's would win silently over a
			// wrong one in the body (RFC 6749 §2.3: one method a request).
			if ok && req.ClientSecret != "" && req.ClientSecret != secret {
				return req, domain.Errorf(domain.InvalidClient, "the client secret in the Basic header and the body differ")
			}
			req.ClientID, req.ClientSecret = id, secret
			var p domain.Problems
			checkPrintable(&p, "Authorization", id+":"+secret)
			if err := p.Err(); err != nil {
				return req, err
			}
		}
		if !ok {
			return req, domain.Errorf(domain.InvalidClient, "the Basic authorization header is malformed")
		}
	}
	return req, nil
}

// A grant is who a token request proved to be, and when its token is
// issued: as of the moment its credential was read, before the slow hash
// of the secret. A new secret or password, or any revocation, stored after
// that moment stops the token, as it stops those issued before; one stored
// already, and seen, does not (see IssueTime).
type grant struct {
	principal domain.Principal
	demo      bool
	issuedAt  time.Time
}

func (s *Server) clientGrant(r *http.Request, req tokenRequest) (grant, error) {
	if req.ClientID == "" || req.ClientSecret == "" {
		return grant{}, domain.Errorf(domain.InvalidRequest, "clientId and clientSecret are required for client_credentials")
	}
	c, ok := s.identity.Client(req.ClientID)
	issuedAt := s.identity.IssueTime("client:"+c.ClientID, c.OrganizationID, time.Now())
	matched, err := s.secretStillMatches(r, ok, c.SecretHash, req.ClientSecret, func() string {
		c, _ := s.identity.Client(req.ClientID)
		return c.SecretHash
	})
	if err != nil || !matched {
		return grant{}, cmp.Or(err, domain.Errorf(domain.InvalidGrant, "invalid client credentials"))
	}
	// Only after the secret matched: the reason tells nobody else which
	// clients are disabled or belong to a demo organisation.
	if !c.Status.Active() {
		return grant{}, domain.Errorf(domain.InvalidGrant, "the client is %s", c.Status.Shown())
	}
	p, err := s.orgPrincipal(domain.InvalidGrant, "client:"+c.ClientID, c.OrganizationID)
	return grant{p, c.Demo, issuedAt}, err
}

func (s *Server) passwordGrant(r *http.Request, req tokenRequest) (grant, error) {
	if req.Username == "" || req.Password == "" {
		return grant{}, domain.Errorf(domain.InvalidRequest, "username and password are required for the password grant")
	}
	u, ok := s.identity.User(req.Username)
	issuedAt := s.identity.IssueTime("user:"+u.Username, u.OrganizationID, time.Now())
	matched, err := s.secretStillMatches(r, ok, u.PasswordHash, req.Password, func() string {
		u, _ := s.identity.User(req.Username)
		return u.PasswordHash
	})
	if err != nil || !matched {
		return grant{}, cmp.Or(err, domain.Errorf(domain.InvalidGrant, "invalid username or password"))
	}
	if !u.Status.Active() {
		return grant{}, domain.Errorf(domain.InvalidGrant, "the user is %s", u.Status.Shown())
	}
	p, err := s.orgPrincipal(domain.InvalidGrant, "user:"+u.Username, u.OrganizationID)
	return grant{p, u.Demo, issuedAt}, err
}

// secretStillMatches checks secret against hash, the credential's as
// read, and then that hash is still the credential's (current) once this
// replica holds every event stored meanwhile: a new secret or password
// stored while the hash was worked out grants nothing, rather than a token
// its change refuses (see grant).
func (s *Server) secretStillMatches(r *http.Request, found bool, hash, secret string, current func() string) (bool, error) {
	if !s.secretMatches(found, hash, secret) {
		return false, nil
	}
	if err := s.caughtUp(r, "whether the credential still holds; no token was issued"); err != nil {
		return false, err
	}
	return current() == hash, nil
}

func (s *Server) secretMatches(found bool, hash, secret string) bool {
	if !found {
		// An unknown name takes as long as a wrong secret, so names
		// cannot be found by timing.
		bcrypt.CompareHashAndPassword(s.dummyHash, []byte(secret))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(secret)) == nil
}

// claimant is the client or user a failed token request named, as the
// audit log records it: its subject (a username as the user has it,
// whatever its case in the request, so that failures against one user
// are folded together and found by its name; one of no user in lower
// case), and its organisation, if there is one, whose business the
// failure is.
func (s *Server) claimant(req tokenRequest) (subject, orgID string) {
	if req.GrantType != "password" {
		c, _ := s.identity.Client(req.ClientID)
		return claimedSubject(req), c.OrganizationID
	}
	if u, ok := s.identity.User(req.Username); ok {
		return "user:" + u.Username, u.OrganizationID
	}
	return strings.ToLower(claimedSubject(req)), ""
}

// claimedSubject is who a token request said it was.
func claimedSubject(req tokenRequest) string {
	// The name goes into the audit log, which keeps everything: a name
	// no client or user can have is cut short, so that failed logins
	// with megabyte names cannot fill the stream.
	if req.GrantType == "password" {
		return "user:" + clip(req.Username, maxClaimedName)
	}
	return "client:" + clip(req.ClientID, maxClaimedName)
}

// maxClaimedName is longer than any client id or username may be, and
// short enough that the actor it makes ("client:" and the name, the
// longer of the two prefixes) is a userId the audit log's filter takes
// (maxQueryValue): else a failed login with a long name would be in the
// log, but could not be asked for.
const maxClaimedName = maxQueryValue - len("client:")
