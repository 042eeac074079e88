package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/config"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/projections"
)

// system is the actor of what the server does on its own at start.
var system = domain.Principal{Subject: "system:cargod"}

// seed creates what should exist; it may already, from an earlier start.
// Command ids are fixed, so a repeat appends nothing.
type seed struct {
	ctx  context.Context
	cmds *commands.Handler
	err  error
}

func (s *seed) meta(what string) commands.Meta { return commands.NewMeta(system, "seed:"+what, "") }

// ignoreExisting treats "already exists" as done.
func (s *seed) check(err error) {
	if s.err == nil && err != nil && domain.ErrorCode(err) != domain.Conflict {
		s.err = err
	}
}

func (s *seed) org(c domain.CreateOrganization) {
	_, err := s.cmds.CreateOrganization(s.ctx, s.meta("org:"+c.OrganizationID), c)
	s.check(err)
}

func (s *seed) client(id, org, secret string, demo bool) {
	_, err := s.cmds.CreateClient(s.ctx, s.meta("client:"+id), id, org, secret, demo)
	s.check(err)
}

// bootstrap creates the admin client of CARGO_ADMIN_SECRET and, in demo
// mode, the demo organisations and credentials.
func bootstrap(ctx context.Context, cmds *commands.Handler, cfg config.Config) error {
	s := &seed{ctx: ctx, cmds: cmds}
	if cfg.AdminSecret != "" {
		s.org(domain.CreateOrganization{OrganizationID: "operator", Name: "Service operator", Role: domain.RoleAdmin})
		s.client(cfg.AdminClientID, "operator", cfg.AdminSecret, false)
		// A start that would leave the operator without the admin it
		// asked for stops, saying why.
		if s.err == nil {
			if err := cmds.CheckAdminClient(ctx, cfg.AdminClientID, "operator", cfg.AdminSecret); err != nil {
				return fmt.Errorf("bootstrap: CARGO_ADMIN_SECRET: %w (set CARGO_ADMIN_CLIENT_ID to another id)", err)
			}
		}
	}
	if cfg.Demo {
		for _, o := range demoOrganizations {
			o.Demo = true
			s.org(o)
			s.client(o.OrganizationID, o.OrganizationID, o.OrganizationID+"-secret", true)
		}
		_, err := cmds.CreateUser(ctx, s.meta("user:forwarder"), "forwarder", "demo-forwarder", "forwarder-password", true)
		s.check(err)
	}
	if s.err != nil {
		return fmt.Errorf("bootstrap: %w", s.err)
	}
	return nil
}

// demoGoesInto reports whether demo mode, on by default, goes into the
// store: one with no organisations, or the demo's among its own (a demo
// started again). A store with organisations of its own alone is a real
// one, started with the defaults on loopback (behind a proxy on the same
// host, say): the demo's public credentials, an admin's among them, would
// let anyone who reaches it in.
func demoGoesInto(ctx context.Context, store *eventstore.Store) (bool, error) {
	orgs, err := store.HoldsEventsOf(ctx, domain.AggregateOrganization)
	if err != nil || !orgs {
		return true, err
	}
	demo, err := store.Load(ctx, domain.Aggregate{Type: domain.AggregateOrganization, ID: demoOrganizations[0].OrganizationID})
	return len(demo) > 0, err
}

// demoOrganizations each get an API client named like the organisation,
// whose secret is "<client id>-secret".
var demoOrganizations = []domain.CreateOrganization{
	{OrganizationID: "demo-forwarder", Name: "Demo Forwarding Ltd", Role: domain.RoleForwarder},
	{OrganizationID: "demo-airline-lh", Name: "Lufthansa Cargo (demo)", Role: domain.RoleAirline, AWBPrefix: "020", AirlineCode: "LH"},
	{OrganizationID: "demo-airline-ek", Name: "Emirates SkyCargo (demo)", Role: domain.RoleAirline, AWBPrefix: "176", AirlineCode: "EK"},
	{OrganizationID: "demo-admin", Name: "Cargostream operator (demo)", Role: domain.RoleAdmin},
}

func printDemoHelp(w io.Writer, base string) {
	fmt.Fprintf(w, `
Demo mode: demo organisations and credentials are loaded (see README).
Get a token as the demo forwarder:

  curl -s -X POST %[1]s/api/auth/token -H 'Content-Type: application/json' \
    -d '{"grantType":"client_credentials","clientId":"demo-forwarder","clientSecret":"demo-forwarder-secret"}'

Other demo clients: demo-airline-lh, demo-airline-ek, demo-admin (secret: <client id>-secret);
user forwarder / forwarder-password for the password grant.
`, base)
}

// printNoAdminHelp says, on a start that leaves nobody able to manage
// the service, how to get an admin: a newcomer who started cargod on an
// address off loopback (in a container or a VM) found demo mode off, the
// README's credentials refused, and no word of why.
func printNoAdminHelp(w io.Writer) {
	fmt.Fprint(w, `
No active admin organisation: nobody can create organisations or credentials. Demo mode is off (it is on
by default only without CARGO_NATS_URL on a loopback CARGO_ADDR), so the README's demo credentials
are refused. Start cargod with CARGO_ADMIN_SECRET_FILE (or CARGO_ADMIN_SECRET) to create an admin
client, or with CARGO_DEMO=true to try the service out (its credentials are public).
`)
}

// hasAdmin reports whether an active admin organisation that is not the
// demo's exists.
func hasAdmin(identity *projections.Identity) bool {
	return slices.ContainsFunc(identity.Organizations(), func(o domain.Organization) bool {
		return o.Role == domain.RoleAdmin && !o.Demo && o.Status.Active()
	})
}

// ownOrganizations are the ids of the store's organisations that are not
// the demo's.
func ownOrganizations(identity *projections.Identity) []string {
	var own []string
	for _, o := range identity.Organizations() {
		if !o.Demo {
			own = append(own, o.ID)
		}
	}
	return own
}

// replayProgressEvery is how often a start logs how far its replay has
// come, as a rebuild's job logs its progress.
const replayProgressEvery = 5 * time.Second

// waitCaughtUp returns once the read models hold everything stored before
// the start, which the seeding below consults. Every every, it logs how
// far they have come: a whole stream's replay takes minutes, and the log
// said nothing between "replaying the whole stream" and "cargod ready"
// unless something probed /readyz.
func waitCaughtUp(ctx context.Context, log *slog.Logger, projector *projections.Projector, every time.Duration) error {
	started := time.Now()
	next := started.Add(every)
	for !projector.CaughtUp() {
		if now := time.Now(); now.After(next) && projector.Target() > 0 {
			next = now.Add(every)
			applied, target := projector.Applied(), projector.Target()
			log.Info("replaying the stream into the read models", "appliedSequence", applied, "streamSequence", target,
				"percent", 100*min(applied, target)/target, "for", now.Sub(started).Round(time.Millisecond).String())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// seedReference loads the built-in reference data into a store that has
// none of a kind. A kind that was imported or seeded before is left alone,
// so a fuller import is never overwritten by the built-in set.
func seedReference(ctx context.Context, cmds *commands.Handler, projector *projections.Projector, ref *projections.Reference) error {
	airports, airlines, commodities := ref.Counts()
	var last uint64
	for _, b := range []struct {
		have  int
		batch domain.ReferenceChanged
	}{
		{airports, domain.ReferenceChanged{Kind: domain.RefAirports, Airports: domain.BuiltinAirports()}},
		{airlines, domain.ReferenceChanged{Kind: domain.RefAirlines, Airlines: domain.BuiltinAirlines()}},
		{commodities, domain.ReferenceChanged{Kind: domain.RefCommodities, Commodities: domain.BuiltinCommodities()}},
	} {
		if b.have > 0 {
			continue
		}
		b.batch.Source = "built-in"
		res, err := cmds.ImportReference(ctx, commands.NewMeta(system, "seed:reference:"+b.batch.Kind, ""), b.batch)
		if err != nil {
			return fmt.Errorf("built-in reference data: %w", err)
		}
		last = max(last, res.Sequence)
	}
	return projector.WaitFor(ctx, last)
}
