package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/tokens"
)

const adminSynopsis = `Usage: cargoctl admin [connection flags] <command> [flags]

Manages organisations and credentials through the HTTP API, as an API
client of an organisation with the admin role. cargoctl first gets a token
with that client's credentials: its id from --client-id or
CARGOCTL_CLIENT_ID, its secret from CARGOCTL_CLIENT_SECRET or the file
named by --client-secret-file. The connection flags may also follow the
command, except --client-id after create-client, which names the new client.
The token endpoint takes 20 requests a minute of a client: the token is
kept in $XDG_RUNTIME_DIR/cargoctl for the commands after it (not with
CARGOCTL_TOKEN_CACHE=off), and a command refused a token for now waits as
long as the refusal asks, saying so, if that is a minute at most.

Prints the server's JSON response. When the server refuses, prints its
description and each invalid field on stderr and exits with status 1.

Commands:
  create-org      --id ID --name NAME --role forwarder|airline|admin [--awb-prefix 020 --iata-code LH]
  create-client   --org ORG --client-id ID [--secret-file FILE]
  create-user     --org ORG --username U --password-file FILE (or CARGOCTL_PASSWORD)
  create-api-key  --org ORG --name NAME
  list-orgs
  list-api-keys   [--org ORG]
  list-clients    [--org ORG]
  list-users      [--org ORG]
  revoke-api-key  --id ID

The credential life cycle (see README, Security):
  disable-org, enable-org, delete-org           --id ORG
  disable-client, enable-client, delete-client  --client ID
  rotate-client-secret  --client ID [--new-secret-file FILE]
  disable-user, enable-user, delete-user        --username U
  set-password    --username U --password-file FILE (or CARGOCTL_PASSWORD)
  revoke-tokens   --jti JTI | --token-file FILE | --subject client:ID|user:NAME | --org ORG
  set-rate-limits --org ORG [--per-minute N] [--per-hour N] [--per-day N]

Run 'cargoctl admin <command> --help' for the flags of a command.
`

// defaultURL is the base URL of a cargod on this machine: CARGOCTL_URL if
// set; else where cargod is told to listen, CARGO_ADDR (set in the
// container image, whose health check runs cargoctl in cargod's
// environment), reached on loopback; else cargod's default address.
func defaultURL(getenv func(string) string) string {
	if u := getenv("CARGOCTL_URL"); u != "" {
		return u
	}
	host, port, err := net.SplitHostPort(getenv("CARGO_ADDR"))
	if err != nil || port == "" {
		return "http://127.0.0.1:8080"
	}
	// Every interface, IPv4 or IPv6 (which Go listens on for IPv4 too):
	// IPv4's loopback among them, which a host without IPv6 on its
	// loopback has as well.
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// adminRequest is the API call an admin command makes.
type adminRequest struct {
	method, path string
	body         any    // sent as JSON; nil for none
	hide         string // a field of the response not to print
	note         string // printed on stderr after success
}

// adminCommand is one admin subcommand. define registers its flags and
// returns what builds its request once they are parsed.
type adminCommand struct {
	name, summary string
	define        func(fs *flag.FlagSet, getenv func(string) string) func() (adminRequest, error)
}

var adminCommands = []adminCommand{
	{name: "create-org", summary: "Creates an organisation.", define: defineCreateOrg},
	{name: "create-client", summary: "Creates an API client of an organisation. Without --secret-file the\nserver generates a secret, printed in the response only.", define: defineCreateClient},
	{name: "create-user", summary: "Creates a user of an organisation, for the password grant. The password\ncomes from the file of --password-file or from CARGOCTL_PASSWORD.", define: defineCreateUser},
	{name: "create-api-key", summary: "Creates an API key of an organisation; the key is in the response only.", define: defineCreateAPIKey},
	{name: "list-orgs", summary: "Lists the organisations.", define: defineListOrgs},
	{name: "list-api-keys", summary: "Lists API keys, of all organisations or of one.", define: defineListOfOrg("/api/admin/api-keys", "keys")},
	{name: "list-clients", summary: "Lists API clients with their status, of all organisations or of one; never a secret.", define: defineListOfOrg("/api/admin/clients", "clients")},
	{name: "list-users", summary: "Lists users with their status, of all organisations or of one; never a password.", define: defineListOfOrg("/api/admin/users", "users")},
	{name: "revoke-api-key", summary: "Revokes an API key: it no longer authenticates.", define: defineRevokeAPIKey},
	{name: "disable-org", summary: "Disables an organisation: none of its clients, users and API keys authenticates,\nand its tokens issued until now are refused for good.", define: defineStatus("org", "disable")},
	{name: "enable-org", summary: "Enables a disabled organisation again (its earlier tokens stay refused).", define: defineStatus("org", "enable")},
	{name: "delete-org", summary: "Deletes an organisation: disabled for good; its id is not freed.", define: defineStatus("org", "delete")},
	{name: "disable-client", summary: "Disables an API client: it gets no token, and its tokens issued until now\nare refused for good.", define: defineStatus("client", "disable")},
	{name: "enable-client", summary: "Enables a disabled API client again (its earlier tokens stay refused).", define: defineStatus("client", "enable")},
	{name: "delete-client", summary: "Deletes an API client: disabled for good; its id is not freed.", define: defineStatus("client", "delete")},
	{name: "rotate-client-secret", summary: "Gives an API client a new secret, printed in the response only unless chosen\nwith --new-secret-file. The old secret and the client's tokens stop at once.", define: defineRotateClientSecret},
	{name: "disable-user", summary: "Disables a user: the password grant refuses it, and its tokens issued until\nnow are refused for good.", define: defineStatus("user", "disable")},
	{name: "enable-user", summary: "Enables a disabled user again (its earlier tokens stay refused).", define: defineStatus("user", "enable")},
	{name: "delete-user", summary: "Deletes a user: disabled for good; its username is not freed.", define: defineStatus("user", "delete")},
	{name: "set-password", summary: "Sets a user's password. It comes from the file of --password-file or from\nCARGOCTL_PASSWORD. The old password and the user's tokens stop at once.", define: defineSetPassword},
	{name: "set-rate-limits", summary: "Sets an organisation's rate limits: requests a minute, an hour and a day. All\nthree are set: a limit not given is 0, the service's default (CARGO_RATE_LIMIT_PER_*).\nGET /api/usage?organizationId=ID shows them.", define: defineSetRateLimits},
	{name: "revoke-tokens", summary: "Revokes access tokens: one by its jti (or the token itself, in a file), or all\nthose of a client or user (--subject client:ID or user:NAME) or of an\norganisation issued until now.", define: defineRevokeTokens},
}

func runAdmin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	conn := connFlagsOf(getenv)
	fs := newFlagSet("admin", adminSynopsis)
	conn.register(fs)
	if help, err := parseFlags(fs, args, true, stdout); help || err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.SetOutput(stderr)
		fs.Usage()
		return usagef("admin", "no admin command given")
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	if name == "help" {
		if len(rest) == 0 {
			fs.SetOutput(stdout)
			fs.Usage()
			return nil
		}
		name, rest = rest[0], []string{"--help"}
	}
	i := 0
	for i < len(adminCommands) && adminCommands[i].name != name {
		i++
	}
	if i == len(adminCommands) {
		var names []string
		for _, c := range adminCommands {
			names = append(names, c.name)
		}
		return usagef("admin", "unknown admin command %q%s", name, didYouMean(name, names))
	}
	cmd := adminCommands[i]
	sub := newFlagSet("admin "+cmd.name, "Usage: cargoctl admin "+cmd.name+" [flags]\n\n"+cmd.summary+"\n")
	build := cmd.define(sub, getenv)
	conn.register(sub) // the connection flags the command leaves free
	if help, err := parseFlags(sub, rest, false, stdout); help || err != nil {
		return err
	}
	req, err := build()
	if err != nil {
		return err
	}
	client, err := conn.client(sub.Name(), getenv, stderr)
	if err != nil {
		return err
	}
	return client.run(ctx, req, stdout, stderr)
}

func defineCreateOrg(fs *flag.FlagSet, _ func(string) string) func() (adminRequest, error) {
	var body struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Role      string `json:"role"`
		AWBPrefix string `json:"awbPrefix,omitempty"`
		IATACode  string `json:"iataCode,omitempty"`
	}
	fs.StringVar(&body.ID, "id", "", "organisation `id`: letters, digits, '-' and '_'")
	fs.StringVar(&body.Name, "name", "", "organisation `name`")
	fs.StringVar(&body.Role, "role", "", "`role`: forwarder, airline or admin")
	fs.StringVar(&body.AWBPrefix, "awb-prefix", "", "airline's three-digit air waybill `prefix`, such as 020")
	fs.StringVar(&body.IATACode, "iata-code", "", "airline's two-character IATA `code`, such as LH")
	return func() (adminRequest, error) {
		if err := requireFlags(fs, "id", "name", "role"); err != nil {
			return adminRequest{}, err
		}
		return adminRequest{method: http.MethodPost, path: "/api/admin/organizations", body: body}, nil
	}
}

func defineCreateClient(fs *flag.FlagSet, _ func(string) string) func() (adminRequest, error) {
	var body struct {
		ClientID       string `json:"clientId"`
		OrganizationID string `json:"organizationId"`
		ClientSecret   string `json:"clientSecret,omitempty"`
	}
	fs.StringVar(&body.OrganizationID, "org", "", "`id` of the client's organisation")
	fs.StringVar(&body.ClientID, "client-id", "", "`id` of the new client (the admin's own id then comes from CARGOCTL_CLIENT_ID, or --client-id before create-client)")
	// From a file, as every secret cargoctl takes: on the command line any
	// local user would read it in the process list, and the shell's
	// history would keep it.
	file := fs.String("secret-file", "", "`file` holding the new client's secret, 12 to 72 bytes; better left to the server to generate")
	return func() (adminRequest, error) {
		if err := requireFlags(fs, "org", "client-id"); err != nil {
			return adminRequest{}, err
		}
		req := adminRequest{method: http.MethodPost, path: "/api/admin/clients", body: &body,
			note: "The client secret is shown in this response only: store it now."}
		if *file != "" {
			var err error
			if body.ClientSecret, err = readSecretFile(*file); err != nil {
				return adminRequest{}, fmt.Errorf("--secret-file: %w", err)
			}
			req.hide, req.note = "clientSecret", "" // the caller knows it
		}
		return req, nil
	}
}

func defineCreateUser(fs *flag.FlagSet, getenv func(string) string) func() (adminRequest, error) {
	var body struct {
		Username       string `json:"username"`
		OrganizationID string `json:"organizationId"`
		Password       string `json:"password"`
	}
	fs.StringVar(&body.OrganizationID, "org", "", "`id` of the user's organisation")
	fs.StringVar(&body.Username, "username", "", "user `name`")
	file := fs.String("password-file", "", "`file` holding the password (else env CARGOCTL_PASSWORD)")
	return func() (adminRequest, error) {
		if err := requireFlags(fs, "org", "username"); err != nil {
			return adminRequest{}, err
		}
		var err error
		if body.Password, err = readPassword(fs, *file, getenv); err != nil {
			return adminRequest{}, err
		}
		return adminRequest{method: http.MethodPost, path: "/api/admin/users", body: body}, nil
	}
}

func defineCreateAPIKey(fs *flag.FlagSet, _ func(string) string) func() (adminRequest, error) {
	var body struct {
		OrganizationID string `json:"organizationId"`
		Name           string `json:"name"`
	}
	fs.StringVar(&body.OrganizationID, "org", "", "`id` of the key's organisation")
	fs.StringVar(&body.Name, "name", "", "`name` of the key, to tell keys apart")
	return func() (adminRequest, error) {
		if err := requireFlags(fs, "org", "name"); err != nil {
			return adminRequest{}, err
		}
		return adminRequest{method: http.MethodPost, path: "/api/admin/api-keys", body: body,
			note: "The API key is shown in this response only: store it now."}, nil
	}
}

func defineListOrgs(*flag.FlagSet, func(string) string) func() (adminRequest, error) {
	return func() (adminRequest, error) {
		return adminRequest{method: http.MethodGet, path: "/api/admin/organizations"}, nil
	}
}

// defineListOfOrg defines a command that lists credentials (what) of one
// organisation, or of all, from the admin endpoint at path.
func defineListOfOrg(path, what string) func(*flag.FlagSet, func(string) string) func() (adminRequest, error) {
	return func(fs *flag.FlagSet, _ func(string) string) func() (adminRequest, error) {
		org := fs.String("org", "", "only the "+what+" of the organisation with this `id`")
		return func() (adminRequest, error) {
			// --org "$ORG" of a variable not set would list every
			// organisation's.
			if err := refuseEmpty(fs.Name(), fs, "org"); err != nil {
				return adminRequest{}, err
			}
			req := adminRequest{method: http.MethodGet, path: path}
			if *org != "" {
				req.path += "?" + url.Values{"organizationId": {*org}}.Encode()
			}
			return req, nil
		}
	}
}

func defineRevokeAPIKey(fs *flag.FlagSet, _ func(string) string) func() (adminRequest, error) {
	id := fs.String("id", "", "`id` of the key (see list-api-keys)")
	return func() (adminRequest, error) {
		if err := requireFlags(fs, "id"); err != nil {
			return adminRequest{}, err
		}
		return adminRequest{method: http.MethodDelete, path: "/api/admin/api-keys/" + url.PathEscape(*id),
			note: fmt.Sprintf("API key %s revoked.", *id)}, nil
	}
}

func defineSetRateLimits(fs *flag.FlagSet, _ func(string) string) func() (adminRequest, error) {
	org := fs.String("org", "", "`id` of the organisation")
	var body struct {
		RequestsPerMinute int `json:"requestsPerMinute"`
		RequestsPerHour   int `json:"requestsPerHour"`
		RequestsPerDay    int `json:"requestsPerDay"`
	}
	fs.IntVar(&body.RequestsPerMinute, "per-minute", 0, "requests a minute; 0: the default")
	fs.IntVar(&body.RequestsPerHour, "per-hour", 0, "requests an hour; 0: the default")
	fs.IntVar(&body.RequestsPerDay, "per-day", 0, "requests a day; 0: the default")
	return func() (adminRequest, error) {
		if err := requireFlags(fs, "org"); err != nil {
			return adminRequest{}, err
		}
		return adminRequest{method: http.MethodPut, path: "/api/admin/organizations/" + url.PathEscape(*org) + "/rate-limits", body: body}, nil
	}
}

// lifecycleTargets are the resources with a life cycle: the flag that
// names one, and the path of its admin endpoints.
var lifecycleTargets = map[string]struct{ flag, usage, path string }{
	"org":    {"id", "`id` of the organisation", "/api/admin/organizations/"},
	"client": {"client", "`id` of the API client", "/api/admin/clients/"},
	"user":   {"username", "user `name`", "/api/admin/users/"},
}

// defineStatus defines a command that disables, enables or deletes a
// resource of kind (see lifecycleTargets).
func defineStatus(kind, action string) func(*flag.FlagSet, func(string) string) func() (adminRequest, error) {
	target := lifecycleTargets[kind]
	return func(fs *flag.FlagSet, _ func(string) string) func() (adminRequest, error) {
		id := fs.String(target.flag, "", target.usage)
		return func() (adminRequest, error) {
			if err := requireFlags(fs, target.flag); err != nil {
				return adminRequest{}, err
			}
			path := target.path + url.PathEscape(*id)
			if action == "delete" {
				return adminRequest{method: http.MethodDelete, path: path, note: fmt.Sprintf("%s %s deleted.", kind, *id)}, nil
			}
			return adminRequest{method: http.MethodPost, path: path + "/" + action}, nil
		}
	}
}

func defineRotateClientSecret(fs *flag.FlagSet, _ func(string) string) func() (adminRequest, error) {
	client := fs.String("client", "", "`id` of the API client")
	file := fs.String("new-secret-file", "", "`file` holding the new secret, 12 to 72 bytes; better left to the server to generate")
	return func() (adminRequest, error) {
		if err := requireFlags(fs, "client"); err != nil {
			return adminRequest{}, err
		}
		var body struct {
			ClientSecret string `json:"clientSecret,omitempty"`
		}
		req := adminRequest{method: http.MethodPost, path: "/api/admin/clients/" + url.PathEscape(*client) + "/secret", body: &body,
			note: "The new client secret is shown in this response only: store it now."}
		if *file != "" {
			var err error
			if body.ClientSecret, err = readSecretFile(*file); err != nil {
				return adminRequest{}, fmt.Errorf("--new-secret-file: %w", err)
			}
			req.hide, req.note = "clientSecret", "" // the caller knows it
		}
		return req, nil
	}
}

func defineSetPassword(fs *flag.FlagSet, getenv func(string) string) func() (adminRequest, error) {
	username := fs.String("username", "", "user `name`")
	file := fs.String("password-file", "", "`file` holding the new password (else env CARGOCTL_PASSWORD)")
	return func() (adminRequest, error) {
		if err := requireFlags(fs, "username"); err != nil {
			return adminRequest{}, err
		}
		password, err := readPassword(fs, *file, getenv)
		if err != nil {
			return adminRequest{}, err
		}
		return adminRequest{method: http.MethodPut, path: "/api/admin/users/" + url.PathEscape(*username) + "/password",
			body: map[string]string{"password": password}, note: fmt.Sprintf("Password of %s set.", *username)}, nil
	}
}

// readPassword is the password of file, or else of CARGOCTL_PASSWORD.
func readPassword(fs *flag.FlagSet, file string, getenv func(string) string) (string, error) {
	password := getenv("CARGOCTL_PASSWORD")
	if file != "" {
		var err error
		if password, err = readSecretFile(file); err != nil {
			return "", fmt.Errorf("--password-file: %w", err)
		}
	}
	if password == "" {
		return "", usagef(fs.Name(), "no password: give --password-file or set CARGOCTL_PASSWORD")
	}
	return password, nil
}

func defineRevokeTokens(fs *flag.FlagSet, _ func(string) string) func() (adminRequest, error) {
	var body struct {
		JTI            string `json:"jti,omitempty"`
		Subject        string `json:"subject,omitempty"`
		OrganizationID string `json:"organizationId,omitempty"`
	}
	fs.StringVar(&body.JTI, "jti", "", "the token's `id` (its jti claim)")
	tokenFile := fs.String("token-file", "", "`file` holding the token itself, or as an Authorization header has it (Bearer <token>), whose jti is revoked (a leaked token, say)")
	fs.StringVar(&body.Subject, "subject", "", "every token of this client or user: client:<id> or user:<name>")
	fs.StringVar(&body.OrganizationID, "org", "", "every token of the organisation with this `id`")
	return func() (adminRequest, error) {
		given := 0
		for _, v := range []string{body.JTI, *tokenFile, body.Subject, body.OrganizationID} {
			if v != "" {
				given++
			}
		}
		if given != 1 {
			return adminRequest{}, usagef(fs.Name(), "give one of --jti, --token-file, --subject and --org")
		}
		if *tokenFile != "" {
			raw, err := readSecretFile(*tokenFile)
			if err != nil {
				return adminRequest{}, fmt.Errorf("--token-file: %w", err)
			}
			// A token copied with its Authorization header's scheme, as
			// a log or a client's request shows it.
			if scheme, token, ok := strings.Cut(strings.TrimSpace(raw), " "); ok && strings.EqualFold(scheme, "Bearer") {
				raw = strings.TrimSpace(token)
			}
			if body.JTI, err = tokens.ID(raw); err != nil {
				return adminRequest{}, fmt.Errorf("--token-file: %w", err)
			}
		}
		return adminRequest{method: http.MethodPost, path: "/api/admin/token-revocations", body: body, note: "Tokens revoked."}, nil
	}
}

// requireFlags reports the named flags that are empty.
func requireFlags(fs *flag.FlagSet, names ...string) error {
	var missing []string
	for _, n := range names {
		if fs.Lookup(n).Value.String() == "" {
			missing = append(missing, "--"+n)
		}
	}
	if len(missing) > 0 {
		return usagef(fs.Name(), "missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// connFlags say which server to call, and as which admin client.
type connFlags struct {
	url, clientID, secretFile string
	timeout                   time.Duration // of each answer (see apiTimeout)
}

// connFlagsOf is the connection of the environment, before the flags:
// the server of defaultURL, the client of CARGOCTL_CLIENT_ID.
func connFlagsOf(getenv func(string) string) connFlags {
	return connFlags{url: defaultURL(getenv), clientID: getenv("CARGOCTL_CLIENT_ID")}
}

// apiTimeout is how long a command waits for each answer of the API,
// unless --timeout says otherwise.
const apiTimeout = 30 * time.Second

// register adds the connection flags that fs does not define already.
func (c *connFlags) register(fs *flag.FlagSet) {
	c.timeout = apiTimeout
	fs.Var(positiveDuration{&c.timeout}, "timeout", "how long to `wait` for each answer of the API: a server that takes the connection and never answers fails after it")
	for _, f := range []struct {
		p           *string
		name, usage string
	}{
		{&c.url, "url", "base `URL` of the Cargostream HTTP API (env CARGOCTL_URL; else CARGO_ADDR, on loopback)"},
		{&c.clientID, "client-id", "`id` of an API client of an admin organisation (env CARGOCTL_CLIENT_ID)"},
		{&c.secretFile, "client-secret-file", "`file` holding that client's secret (else env CARGOCTL_CLIENT_SECRET)"},
	} {
		if fs.Lookup(f.name) == nil {
			fs.StringVar(f.p, f.name, *f.p, f.usage)
		}
	}
}

func (c connFlags) client(cmd string, getenv func(string) string, stderr io.Writer) (*apiClient, error) {
	if err := checkURL(cmd, c.url); err != nil {
		return nil, err
	}
	if c.clientID == "" {
		return nil, usagef(cmd, "no admin client: set CARGOCTL_CLIENT_ID or --client-id")
	}
	secret := getenv("CARGOCTL_CLIENT_SECRET")
	if c.secretFile != "" {
		var err error
		if secret, err = readSecretFile(c.secretFile); err != nil {
			return nil, fmt.Errorf("--client-secret-file: %w", err)
		}
	}
	if secret == "" {
		return nil, usagef(cmd, "no client secret: set CARGOCTL_CLIENT_SECRET or --client-secret-file")
	}
	base, tokens := strings.TrimRight(c.url, "/"), tokenCacheOf(getenv)
	return &apiClient{
		base: base, clientID: c.clientID, secret: secret, tokens: tokens, tokenFile: tokens.file(base, c.clientID, secret),
		http: &http.Client{Timeout: c.timeout, Transport: apiTransport}, stderr: stderr,
	}, nil
}

// checkURL is a usage error unless raw is an http or https URL with a
// host, and a port (if any) that can be dialled: a port out of range is a
// mistake in the command line, as in --nats-url, not a server that does
// not answer.
func checkURL(cmd, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef(cmd, "--url %q is not an http or https URL", raw)
	}
	if !domain.ValidPort(u.Port()) {
		return usagef(cmd, "--url %q has a port outside 1..65535", raw)
	}
	return nil
}

// apiTransport carries every request of cargoctl to cargod's HTTP API.
// Its connections tell a NATS server at --url (cargod's CARGO_NATS_LISTEN
// port given for its CARGO_ADDR) by the greeting it sends first, where an
// HTTP server waits for the request: Go's transport took the greeting for
// a malformed response, or, when it came before the request was written,
// logged it on stderr as an unsolicited response and failed with an error
// of its internals.
var apiTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	dial := t.DialContext
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &natsGreetingConn{Conn: conn}, nil
	}
	return t
}()

// errNATSAnswers is the first read of a connection to a NATS server.
var errNATSAnswers = errors.New("a NATS server answers")

// natsGreetingConn fails its first read with errNATSAnswers when the
// server greets as a NATS server does ("INFO {...}"): no HTTP response
// begins so, and the transport then neither logs nor reads the greeting.
type natsGreetingConn struct {
	net.Conn
	read bool // whether the first bytes were read
}

func (c *natsGreetingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.read && n > 0 {
		c.read = true
		if bytes.HasPrefix(p[:n], []byte("INFO {")) {
			return 0, errNATSAnswers
		}
	}
	return n, err
}

// apiClient calls the HTTP API as one API client.
type apiClient struct {
	base, clientID, secret string
	http                   *http.Client
	stderr                 io.Writer // says why a command waits
	bearer                 string    // the access token requests carry, once authorize got it
	tokens                 tokenCache
	tokenFile              string // where tokens keeps this client's token
}

func (c *apiClient) run(ctx context.Context, req adminRequest, stdout, stderr io.Writer) error {
	if err := c.authorize(ctx); err != nil {
		return err
	}
	body, err := c.call(ctx, req.method, req.path, req.body)
	if err != nil {
		return err
	}
	if req.hide != "" {
		body = without(body, req.hide)
	}
	if err := printJSON(stdout, body); err != nil {
		return err
	}
	if req.note != "" {
		fmt.Fprintln(stderr, req.note)
	}
	return nil
}

// authorize gets an access token with the client's credentials, which
// the requests after it carry: the one kept from an earlier command, if
// it is still good, else a new one, which is kept (see tokenCache).
func (c *apiClient) authorize(ctx context.Context) error {
	if token := c.tokens.get(c.tokenFile, time.Now()); token != "" {
		c.bearer = token
		return nil
	}
	c.bearer = "" // the token request carries none
	body, err := c.requestToken(ctx)
	var apiErr *apiError
	if errors.As(err, &apiErr) {
		return fmt.Errorf("getting a token for client %s: %w", c.clientID, err)
	}
	if err != nil {
		return err // a server that does not answer says so itself
	}
	var res struct {
		AccessToken string `json:"accessToken"`
		ExpiresIn   int64  `json:"expiresIn"`
	}
	if err := json.Unmarshal(body, &res); err != nil || res.AccessToken == "" {
		return fmt.Errorf("getting a token for client %s: the token response has no accessToken: %.200s", c.clientID, body)
	}
	c.bearer = res.AccessToken
	c.tokens.put(c.tokenFile, res.AccessToken, time.Now().Add(time.Duration(res.ExpiresIn)*time.Second))
	return nil
}

// requestWaits is how often a request answered 429 is made again, after
// the wait the answer asks for.
const requestWaits = 3

// longestRequestWait is the longest wait a 429 may ask for that cargoctl
// waits out: a minute, the window of the token endpoint's limits and of
// an organisation's limit a minute. One asking for more is an hour's or a
// day's limit used up (Retry-After until the window ends, hours away):
// waited out, up to three times, a command hung, saying one line, until
// the next day. It is given at once, naming when to try again.
const longestRequestWait = time.Minute

// requestToken asks for a token. Each cargoctl command gets one, and the
// token endpoint allows 20 requests a minute per client from an address
// (against guessing): a script of more admin commands than that waits
// until the endpoint takes them again (see exchange), rather than failing
// halfway through.
func (c *apiClient) requestToken(ctx context.Context) ([]byte, error) {
	return c.call(ctx, http.MethodPost, "/api/auth/token", struct {
		GrantType    string `json:"grantType"`
		ClientID     string `json:"clientId"`
		ClientSecret string `json:"clientSecret"`
	}{"client_credentials", c.clientID, c.secret})
}

// call makes one request with a JSON body (if any) and returns the body
// of a successful response; an error response is an *apiError.
func (c *apiClient) call(ctx context.Context, method, path string, body any) ([]byte, error) {
	if body == nil {
		return c.send(ctx, method, path, "", nil)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return c.send(ctx, method, path, "application/json", b)
}

// send makes one request with a body of contentType.
func (c *apiClient) send(ctx context.Context, method, path, contentType string, body []byte) ([]byte, error) {
	raw, _, err := c.exchange(ctx, method, path, contentType, body)
	return raw, err
}

// exchange is send, with the response's header. A request refused for
// now (429: a rate limit, of the token endpoint or of the organisation,
// which counts every request, the polls of a rebuild or verify among
// them) was not carried out: it is made again once the wait the answer
// asks for is over, saying so, up to requestWaits times, if that wait is
// no longer than longestRequestWait. Given up at the
// first refusal, a verify whose poll was refused ended with the refusal
// alone while its job went on in cargod.
func (c *apiClient) exchange(ctx context.Context, method, path, contentType string, body []byte) ([]byte, http.Header, error) {
	for waits := 0; ; waits++ {
		raw, header, err := c.exchangeAuthorized(ctx, method, path, contentType, body)
		var apiErr *apiError
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusTooManyRequests || apiErr.retryAfter <= 0 ||
			apiErr.retryAfter > longestRequestWait || waits == requestWaits {
			return raw, header, err
		}
		what := method + " " + strings.SplitN(path, "?", 2)[0]
		if path == "/api/auth/token" {
			what = "a token"
		}
		fmt.Fprintf(c.stderr, "cargoctl: cargod refused %s for now (%s): waiting %s, as it asks\n", what, apiErr.Description, apiErr.retryAfter)
		select {
		case <-time.After(apiErr.retryAfter):
		case <-ctx.Done():
			return nil, nil, errInterrupted
		}
	}
}

// exchangeAuthorized is exchangeOnce. A token refused (401) has run out
// (it lives CARGO_TOKEN_TTL, which a long rebuild, verify or import
// outlives), or was kept from an earlier command and has since been
// revoked. The server did nothing with the request, so it is made once
// more with a new token.
func (c *apiClient) exchangeAuthorized(ctx context.Context, method, path, contentType string, body []byte) ([]byte, http.Header, error) {
	raw, header, err := c.exchangeOnce(ctx, method, path, contentType, body)
	var apiErr *apiError
	if c.bearer != "" && errors.As(err, &apiErr) && apiErr.Status == http.StatusUnauthorized {
		c.tokens.forget(c.tokenFile)
		if err := c.authorize(ctx); err != nil {
			return nil, nil, err
		}
		return c.exchangeOnce(ctx, method, path, contentType, body)
	}
	return raw, header, err
}

func (c *apiClient) exchangeOnce(ctx context.Context, method, path, contentType string, body []byte) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "cargoctl")
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, errInterrupted // the server is not to blame
		}
		var timeout net.Error
		if errors.As(err, &timeout) && timeout.Timeout() {
			// Go's words: "context deadline exceeded (Client.Timeout
			// exceeded while awaiting headers)".
			return nil, nil, fmt.Errorf("cargod at %s did not answer within %s (--timeout)", c.base, c.http.Timeout)
		}
		return nil, nil, unreachable(c.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil && ctx.Err() != nil {
		return nil, nil, errInterrupted
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: reading the response: %w", method, req.URL.Redacted(), err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := apiErrorOf(resp.StatusCode, raw)
		if seconds, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && seconds > 0 {
			// Past a day it is a day: a number of seconds so large that
			// the Duration overflowed could come out as a short wait.
			e.retryAfter = time.Duration(min(seconds, 86400)) * time.Second
		}
		return nil, nil, e
	}
	return raw, resp.Header, nil
}

// errInterrupted ends a command whose user interrupted it (Ctrl-C).
var errInterrupted = errors.New("interrupted")

// unreachable says in one line which cargod did not answer and why
// ("connection refused"), from err, Go's account of a request that got
// no response: it buries the reason under the method, the URL and the
// dial, and names the path rather than the server the operator gave. A
// NATS server found where cargod's API was looked for is named as such,
// with the flag its address is for. Every command that calls the API says
// it so.
func unreachable(base string, err error) error {
	if errors.Is(err, errNATSAnswers) {
		return fmt.Errorf("a NATS server answers at %s, not cargod's HTTP API: --url is the address of cargod's HTTP API (its CARGO_ADDR); "+
			"a NATS server's address is for --nats-url (cargoctl events, trace and parked)", base)
	}
	return fmt.Errorf("cargod at %s %w: %w", base, errNoAnswer, reason(err))
}

// errNoAnswer is in the error of a request that got no response, for the
// commands that say what it means for what they were doing.
var errNoAnswer = errors.New("does not answer")

// reason is why a request or a dial failed, without the request, the
// dial and the system call around it: "connection refused", or "it
// closed the connection" for a bare EOF.
func reason(err error) error {
	reason := err
	var urlErr *url.Error
	if errors.As(reason, &urlErr) {
		reason = urlErr.Err
	}
	var opErr *net.OpError
	if errors.As(reason, &opErr) {
		reason = opErr.Err
	}
	var sysErr *os.SyscallError
	if errors.As(reason, &sysErr) {
		reason = sysErr.Err
	}
	if errors.Is(reason, io.EOF) || errors.Is(reason, io.ErrUnexpectedEOF) {
		// Go's word for a peer that hung up at once: something else
		// listens on that port, or it refused this client.
		return errors.New("it closed the connection")
	}
	return reason
}

// apiError is the server's error response.
type apiError struct {
	Status           int
	retryAfter       time.Duration // the response's Retry-After, in whole seconds, if any
	Code             string        `json:"error"`
	Description      string        `json:"errorDescription"`
	ValidationErrors []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
		Code    string `json:"code"`
	} `json:"validationErrors"`
}

func apiErrorOf(status int, body []byte) *apiError {
	e := &apiError{}
	if err := json.Unmarshal(body, e); err != nil || (e.Code == "" && e.Description == "") {
		// Not the API's error body: a proxy's, say.
		e = &apiError{Description: strings.TrimSpace(string(body))}
		if line, _, _ := strings.Cut(e.Description, "\n"); len(line) > 200 || line != e.Description {
			e.Description = fmt.Sprintf("%.200s ...", line)
		}
	}
	e.Status = status
	return e
}

func (e *apiError) Error() string {
	var b strings.Builder
	desc := e.Description
	if desc == "" {
		desc = http.StatusText(e.Status)
	}
	fmt.Fprintf(&b, "%s (HTTP %d", desc, e.Status)
	if e.Code != "" {
		fmt.Fprintf(&b, ", %s", e.Code)
	}
	b.WriteString(")")
	for _, f := range e.ValidationErrors {
		fmt.Fprintf(&b, "\n  %s: %s (%s)", f.Field, f.Message, f.Code)
	}
	return b.String()
}

// without removes a top-level field from a JSON object.
func without(body []byte, field string) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return body
	}
	delete(obj, field)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(obj) != nil {
		return body
	}
	return out.Bytes()
}

// printJSON pretty-prints a JSON response; anything else as it came.
func printJSON(w io.Writer, body []byte) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		buf.Reset()
		buf.Write(body)
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}
