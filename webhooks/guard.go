package webhooks

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// Guard keeps webhook traffic off the service's own network: targets that
// resolve to loopback, private, link-local, multicast or unspecified
// addresses (the cloud metadata address among them) are refused, both at
// registration and at connection time, so DNS rebinding cannot get
// through. AllowPrivate lifts it, for tests and closed networks.
type Guard struct{ AllowPrivate bool }

func blocked(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsMulticast() || ip.IsUnspecified() || ip.IsInterfaceLocalMulticast() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(ip) // carrier-grade NAT
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
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Sprintf("%s does not resolve", host)
	}
	for _, a := range addrs {
		if blocked(a) {
			return fmt.Sprintf("%s resolves to %s, a loopback, private, link-local or multicast address", host, a)
		}
	}
	return ""
}

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
		return fmt.Errorf("webhooks: refusing to connect to %s", ap.Addr())
	}
	return nil
}
