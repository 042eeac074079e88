package natstest

import (
	"fmt"
	"net"
	"testing"
)

// The ports found free are distinct, below the kernel's ephemeral range
// where it tells it, and free: a server can listen on each.
func TestFreePortsAreDistinctFreeAndBelowTheEphemeralRange(t *testing.T) {
	ports := FreePorts(t, 5)
	seen := map[int]bool{}
	low := ephemeralLow()
	for _, port := range ports {
		if seen[port] {
			t.Errorf("port %d found twice in %v", port, ports)
		}
		seen[port] = true
		if low > firstDrawnPort && (port < firstDrawnPort || port >= low) {
			t.Errorf("port %d is outside %d to %d, below the ephemeral range", port, firstDrawnPort, low-1)
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Errorf("port %d found free is not: %v", port, err)
			continue
		}
		ln.Close()
	}
	if len(ports) != 5 {
		t.Errorf("%d ports, want 5", len(ports))
	}
}
