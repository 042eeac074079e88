package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"syscall"
	"time"
)

// Guard keeps webhook traffic off the service's own network: targets that
// resolve to loopback, private, link-local, multicast or unspecified
// addresses (the cloud metadata address among them) are refused, both at
// registration and at connection time, so DNS rebinding cannot get
// through. AllowPrivate lifts it, for tests and closed networks.
type Guard struct {
	AllowPrivate bool
	// Lookup resolves a host name at registration; nil is the system's
	// resolver (net.DefaultResolver.LookupNetIP).
	Lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// specialPurpose are ranges no webhook target lives in: this network,
// carrier-grade NAT, IETF protocol assignments, benchmarking, reserved and
// broadcast, the IPv6 forms that carry an IPv4 address inside (Teredo's
// among them: a host with a Teredo tunnel sends to the IPv4 address it
// carries, which may be one of ours), unique local and the deprecated
// site-local IPv6 addresses (still routed inside some networks), and
// Azure's platform address (168.63.129.16: its metadata, DNS and health
// probes answer every virtual machine there).
var specialPurpose = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("240.0.0.0/4"), netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("64:ff9b:1::/48"), netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("2001::/32"), netip.MustParsePrefix("fc00::/7"), netip.MustParsePrefix("fec0::/10"), netip.MustParsePrefix("168.63.129.16/32"),
}

func blocked(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsMulticast() || ip.IsUnspecified() || ip.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range specialPurpose {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Check says why a URL may not be a webhook target, or "".
func (g Guard) Check(u *url.URL) string {
	if u.Scheme != "http" && u.Scheme != "https" {
		return "must be http or https"
	}
	if g.AllowPrivate {
		return ""
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if blocked(ip) {
			return fmt.Sprintf("%s is a loopback, private, link-local or multicast address", host)
		}
		return ""
	}
	lookup := g.Lookup
	if lookup == nil {
		lookup = net.DefaultResolver.LookupNetIP
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := lookup(ctx, "ip", host)
	// A name that does not resolve and one that resolves to an address
	// of ours are refused alike, and never with where it points: told
	// apart, they would tell whoever registers names which of ours exist.
	if err != nil || len(addrs) == 0 || slices.ContainsFunc(addrs, blocked) {
		return fmt.Sprintf("%s does not resolve to a public address: a webhook target must be reachable on the public internet", host)
	}
	return ""
}

// errRefusedTarget is a connection control refused. Its message, with
// the address, is for the operator's logs only (see Dispatcher.post).
var errRefusedTarget = errors.New("webhooks: refusing to connect to")

// control refuses connections to blocked addresses, whatever a name
// resolved to at registration.
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	if g.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if blocked(ap.Addr()) {
		return fmt.Errorf("%w %s", errRefusedTarget, ap.Addr())
	}
	return nil
}
