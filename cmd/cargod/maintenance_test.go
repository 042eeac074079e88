package main

import (
	"net/http"
	"sync"
	"testing"
)

// maintenanceJob is a rebuild or verification as GET /api/admin/{kind}
// shows it.
type maintenanceJob struct {
	State, Phase         string
	EventsDone, Sequence uint64
	StreamProblems       []struct{ Problem string }
	ReadModelDifferences []struct{ Description string }
}

// runMaintenance starts a job of kind and follows it to its end.
func (s *testServer) runMaintenance(t *testing.T, admin, kind string) maintenanceJob {
	t.Helper()
	if r := s.do(t, request{method: "POST", path: "/api/admin/" + kind, token: admin}); r.status != http.StatusAccepted {
		t.Fatalf("POST /api/admin/%s: %d %s", kind, r.status, r.body)
	}
	return eventually(t, kind+" to end", func() maintenanceJob {
		var j maintenanceJob
		s.do(t, request{method: "GET", path: "/api/admin/" + kind, token: admin}).json(t, &j)
		return j
	}, func(j maintenanceJob) bool { return j.State != "running" })
}

func TestARebuildOfARunningServerKeepsReadsAnsweringAndEndsEqualToAFreshReplay(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	admin, fwd := s.demoToken(t, "demo-admin"), s.demoToken(t, "demo-forwarder")
	// A shipment's life so far: quote, pricing, booking, AWB number.
	bookedShipment(t, s, fwd)
	flights := func() (int, int) {
		r := s.do(t, request{method: "GET", path: "/api/flights?limit=1", token: fwd})
		var page struct{ Pagination struct{ Total int } }
		if r.status == http.StatusOK {
			r.json(t, &page)
		}
		return r.status, page.Pagination.Total
	}
	_, want := flights()
	if want == 0 {
		t.Fatal("the demo has no flights")
	}

	// A forwarder lists the demo's flights throughout the rebuild, and a
	// forwarder's writes come in meanwhile.
	done := make(chan struct{})
	var wg sync.WaitGroup
	var reads, wrong int
	// repeat calls do until done is closed or do reports false.
	repeat := func(do func() bool) {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if !do() {
					return
				}
			}
		})
	}
	repeat(func() bool {
		if status, total := flights(); status != http.StatusOK || total != want {
			wrong++
			t.Errorf("flights during the rebuild: %d, %d of them, want 200 and %d", status, total, want)
		} else {
			reads++
		}
		return true
	})
	repeat(func() bool {
		key := map[string]any{"organizationId": "demo-forwarder", "name": "during the rebuild"}
		if r := s.do(t, request{method: "POST", path: "/api/admin/api-keys", token: admin, body: key}); r.status != http.StatusCreated {
			t.Errorf("a write during the rebuild: %d %s", r.status, r.body)
			return false
		}
		return true
	})
	rebuilt := s.runMaintenance(t, admin, "rebuild")
	close(done)
	wg.Wait()
	if rebuilt.State != "succeeded" || rebuilt.Phase != "done" || rebuilt.EventsDone == 0 || rebuilt.Sequence == 0 {
		t.Errorf("rebuild ended %+v", rebuilt)
	}
	if reads == 0 || wrong > 0 {
		t.Errorf("%d reads answered during the rebuild, %d wrong", reads, wrong)
	}

	verified := s.runMaintenance(t, admin, "verify")
	if verified.State != "succeeded" || len(verified.StreamProblems) > 0 || len(verified.ReadModelDifferences) > 0 || verified.Sequence < rebuilt.Sequence {
		t.Errorf("verify after the rebuild ended %+v", verified)
	}
	r := s.do(t, request{method: "GET", path: "/metrics", token: admin})
	families := parseMetrics(t, r.body)
	if v, ok := metricValue(families, "cargo_readmodel_job_running", "kind", "rebuild"); !ok || v != 0 {
		t.Errorf("rebuild running = %v, %v after its end", v, ok)
	}
	if v, ok := metricValue(families, "cargo_readmodel_job_events_done", "kind", "rebuild"); !ok || v != float64(rebuilt.EventsDone) {
		t.Errorf("rebuild's events done = %v, %v; its status says %d", v, ok, rebuilt.EventsDone)
	}
	if r := s.do(t, request{method: "POST", path: "/api/admin/rebuild", token: fwd}); r.status != http.StatusForbidden {
		t.Errorf("a forwarder's rebuild: %d, want 403", r.status)
	}
}
