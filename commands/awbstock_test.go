package commands

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/storetest"
	"github.com/cargostream/cargostream/projections"
)

// validToAsAsked is a reply's validTo within the 12 months from today
// that the tests' stock requests ask for.
func validToAsAsked() string { return time.Now().UTC().AddDate(0, 11, 0).Format(time.DateOnly) }

// takeAWB takes an AWB number from the ledger on its own, in a
// transaction of its own (a booking's confirmation and a MAWB take theirs
// in theirs).
func (h *Handler) takeAWB(ctx context.Context, m Meta, orgID, prefix, awb, reference string) (number string, err error) {
	err = transact(ctx, h, func(t *transaction) error {
		number, err = useAWB(t, m, orgID, prefix, awb, reference)
		return err
	})
	return number, err
}

// stockedWorld is a store in which forwarder f holds an approved range of
// count numbers of LH's prefix 020.
func stockedWorld(t testing.TB, dir string, count int) (*Handler, domain.Principal) {
	t.Helper()
	store, err := eventstore.Open(context.Background(), eventstore.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	h := New(store, 4, builtinReference())
	fwd := domain.Principal{Subject: "client:f", OrganizationID: "f", Role: domain.RoleForwarder}
	lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	ctx := context.Background()
	req, err := h.RequestStock(ctx, NewMeta(fwd, "stock-request", ""), domain.RequestStock{AirlinePrefix: "020",
		RequestedStock: &count, ValidityPeriod: new(12)}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	today := h.now().UTC().Format("2006-01-02")
	if _, err := h.ReplyStock(ctx, NewMeta(lh, "stock-reply", ""), req.State.ID, domain.ReplyStock{Status: domain.StockStatusApproved,
		AllocatedStock: &count, ValidFrom: today, ValidTo: validToAsAsked()}, projections.NewShipments()); err != nil {
		t.Fatal(err)
	}
	return h, fwd
}

func TestConcurrentAssignmentsAreDistinctAndBounded(t *testing.T) {
	dir := t.TempDir()
	const stock, callers = 990, 1000
	h, fwd := stockedWorld(t, dir, stock)
	numbers := make(chan string, callers)
	refusals := make(chan string, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := h.takeAWB(context.Background(), NewMeta(fwd, "", ""), "f", "020", "", fmt.Sprint("booking-", i))
			switch {
			case err == nil:
				numbers <- n
			case domain.ReasonOf(err) != "":
				refusals <- domain.ReasonOf(err)
			default:
				t.Errorf("assignment %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	close(numbers)
	close(refusals)
	seen := map[string]bool{}
	for n := range numbers {
		if _, err := domain.ParseAWB(n); err != nil || seen[n] {
			t.Errorf("number %s: duplicate %v, %v", n, seen[n], err)
		}
		seen[n] = true
		if _, serial := domain.AWBSerial(n); serial < 1 || serial > stock {
			t.Errorf("%s lies outside the range", n)
		}
	}
	if len(seen) != stock || len(refusals) != callers-stock {
		t.Fatalf("%d numbers and %d refusals, want %d and %d", len(seen), len(refusals), stock, callers-stock)
	}
	for r := range refusals {
		if r != domain.ReasonNoStock {
			t.Errorf("refusal %q, want %q", r, domain.ReasonNoStock)
		}
	}

	// After a restart, the ledger knows every number is used.
	h.store.(*eventstore.Store).Close()
	store, err := eventstore.Open(context.Background(), eventstore.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h2 := New(store, 4, builtinReference())
	if _, err := h2.takeAWB(context.Background(), NewMeta(fwd, "", ""), "f", "020", "", "one-more"); domain.ReasonOf(err) != domain.ReasonNoStock {
		t.Errorf("after a restart, one more = %v", err)
	}
	l, _, _, err := load(context.Background(), h2, ledgerAggregate("f", "020"), domain.EvolveStockLedger, "", loadFresh)
	if err != nil || len(l.Used) != stock || l.Available(h2.now().UTC().Format("2006-01-02")) != 0 {
		t.Errorf("ledger after restart: %d used, %v", len(l.Used), err)
	}
	// The low-stock event was recorded once, on the way down.
	recs, _ := store.Load(context.Background(), ledgerAggregate("f", "020"))
	lows := 0
	for _, r := range recs {
		if r.Type == (domain.StockLow{}).EventType() {
			lows++
		}
	}
	if lows != 1 {
		t.Errorf("%d StockLow events, want 1", lows)
	}
}

func TestRetriedAssignmentGetsTheSameNumber(t *testing.T) {
	h, fwd := stockedWorld(t, t.TempDir(), 10)
	m := NewMeta(fwd, "assign-once", "")
	first, err := h.takeAWB(context.Background(), m, "f", "020", "", "b1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.takeAWB(context.Background(), m, "f", "020", "", "b1")
	if err != nil || again != first {
		t.Errorf("retry = %q, %v; want %q", again, err, first)
	}
	next, _ := h.takeAWB(context.Background(), NewMeta(fwd, "", ""), "f", "020", "", "b2")
	if next == first {
		t.Errorf("a new command got the same number %s", next)
	}
}

func TestEveryNumberOfARangeHasAValidCheckDigit(t *testing.T) {
	r := domain.AWBRange{First: 8114070, Count: 10000}
	for s := r.First; s <= r.Last(); s++ {
		n := domain.AWBNumber("020", s)
		if got, err := domain.ParseAWB(n); err != nil || got != n {
			t.Fatalf("%s: %v", n, err)
		}
	}
}

func TestConcurrentRepliesAgree(t *testing.T) {
	h, fwd := stockedWorld(t, t.TempDir(), 100)
	ctx := context.Background()
	lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	hundred := 100
	req, err := h.RequestStock(ctx, NewMeta(fwd, "second-request", ""), domain.RequestStock{AirlinePrefix: "020",
		RequestedStock: &hundred, ValidityPeriod: new(12)}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := 2000000 + i*1000
			h.ReplyStock(ctx, NewMeta(lh, "", ""), req.State.ID, domain.ReplyStock{Status: domain.StockStatusApproved, AllocatedStock: &hundred,
				ValidFrom: time.Now().UTC().Format(time.DateOnly), ValidTo: validToAsAsked(),
				StartNumber: domain.AWBNumber("020", first), EndNumber: domain.AWBNumber("020", first+99)}, projections.NewShipments())
		}()
	}
	wg.Wait()
	prefix, _, _, _ := load(ctx, h, domain.Aggregate{Type: domain.AggregateAWBPrefix, ID: "020"}, domain.EvolveAWBPrefixStock, "", loadFresh)
	request, _, _, _ := load(ctx, h, stockRequestAggregate(req.State.ID), domain.EvolveStockRequest, "", loadFresh)
	ledger, _, _, _ := load(ctx, h, ledgerAggregate("f", "020"), domain.EvolveStockLedger, "", loadFresh)
	var inLedger domain.AWBRange
	for _, r := range ledger.Ranges {
		if r.RequestID == req.State.ID {
			inLedger = r.Range
		}
	}
	if got := prefix.Ranges[req.State.ID]; got.Count != 100 || got != request.Range || got != inLedger {
		t.Errorf("prefix holds %+v, the request %+v, the ledger %+v", got, request.Range, inLedger)
	}
}

// Two handlers on one store stand for two replicas: each decides on its
// own cached and pending state, and their decisions conflict in the store.
func TestAssignmentsOfTwoReplicasAtOnceAreDistinctAndBounded(t *testing.T) {
	const stock, callers = 300, 400
	a, fwd := stockedWorld(t, t.TempDir(), stock)
	b := New(a.store, 4, builtinReference())
	var mu sync.Mutex
	seen, refused := map[string]bool{}, 0
	var wg sync.WaitGroup
	for i := range callers {
		h := []*Handler{a, b}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := h.takeAWB(context.Background(), NewMeta(fwd, "", ""), "f", "020", "", fmt.Sprint("booking-", i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && !seen[n]:
				seen[n] = true
			case err == nil:
				t.Errorf("%s assigned twice", n)
			case domain.ReasonOf(err) == domain.ReasonNoStock:
				refused++
			default:
				t.Errorf("assignment %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if len(seen) != stock || refused != callers-stock {
		t.Errorf("%d numbers and %d refusals, want %d and %d", len(seen), refused, stock, callers-stock)
	}
}

// BenchmarkAssignmentsFromOneLedger takes AWB numbers from one forwarder's
// ledger with 64 callers at once, as bookings of one forwarder do: every
// command on the same aggregate, durable. The ledger holds 10,000
// numbers, so run it with -benchtime=5000x or less.
func BenchmarkAssignmentsFromOneLedger(b *testing.B) {
	const stock = 10_000
	if b.N > stock {
		b.Skipf("%d assignments from a stock of %d: use -benchtime=5000x", b.N, stock)
	}
	h, fwd := stockedWorld(b, b.TempDir(), stock)
	work := make(chan int)
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if _, err := h.takeAWB(context.Background(), NewMeta(fwd, "", ""), "f", "020", "", fmt.Sprint("booking-", i)); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	b.ResetTimer()
	for i := range b.N {
		work <- i
	}
	close(work)
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "assignments/s")
}

// withdrawnHereAllocatedThere is two replicas of forwarder f's stock: a
// withdrew it, so a's cached ledger holds none, and b allocated new stock
// since, which a's cache has not seen.
func withdrawnHereAllocatedThere(t *testing.T) (a, b *Handler) {
	a, fwd := stockedWorld(t, t.TempDir(), 10)
	b = New(a.store, 4, builtinReference())
	ctx := context.Background()
	lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	none, today := 0, a.now().UTC().Format("2006-01-02")
	if _, err := a.ReplyStock(ctx, NewMeta(lh, "withdraw", ""), requestOf(t, a), domain.ReplyStock{Status: domain.StockStatusRejected,
		AllocatedStock: &none, ValidFrom: today, ValidTo: validToAsAsked()}, projections.NewShipments()); err != nil {
		t.Fatal(err)
	}
	count := 5
	req, err := b.RequestStock(ctx, NewMeta(fwd, "again", ""), domain.RequestStock{AirlinePrefix: "020", RequestedStock: &count,
		ValidityPeriod: new(12)}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ReplyStock(ctx, NewMeta(lh, "again-reply", ""), req.State.ID, domain.ReplyStock{Status: domain.StockStatusApproved,
		AllocatedStock: &count, ValidFrom: today, ValidTo: validToAsAsked()}, projections.NewShipments()); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// assign has h's reactors take booking b1's number, for the event that
// requested it, in a transaction of its own.
func assign(h *Handler) (number string, err error) {
	r := &Reactors{h: h}
	err = transact(context.Background(), h, func(t *transaction) (err error) {
		number, err = r.assignAWB(t, domain.Record{Envelope: domain.Envelope{EventID: "booking-requested"}}, domain.Booking{ID: "b1", OrganizationID: "f"}, "020")
		return err
	})
	return number, err
}

func TestAConfirmationTakesANumberFromStockAllocatedOnAnotherReplicaAfterAWithdrawal(t *testing.T) {
	a, _ := withdrawnHereAllocatedThere(t)
	if number, err := assign(a); err != nil || number == "" {
		t.Errorf("assignAWB = %q, %v; want a number of the stock allocated on the other replica", number, err)
	}
}

// A confirmation that took its number on another replica, retried on one
// whose cached ledger holds no stock, answers that number, not none.
func TestAConfirmationRetriedWhereNoStockIsCachedAnswersTheNumberItTookOnAnotherReplica(t *testing.T) {
	a, b := withdrawnHereAllocatedThere(t)
	first, err := assign(b)
	if err != nil || first == "" {
		t.Fatalf("on the replica with the stock: %q, %v", first, err)
	}
	if again, err := assign(a); err != nil || again != first {
		t.Errorf("retried on the replica without = %q, %v; want %q", again, err, first)
	}
}

// Without any stock of the prefix, a confirmation takes no number and
// stores nothing on the ledger.
func TestAConfirmationWithoutStockTakesNoNumber(t *testing.T) {
	h := New(storetest.Open(t), 4, builtinReference())
	number, err := assign(h)
	if err != nil || number != "" {
		t.Errorf("assignAWB = %q, %v; want none", number, err)
	}
	if recs, err := h.store.Load(context.Background(), ledgerAggregate("f", "020")); err != nil || len(recs) != 0 {
		t.Errorf("the ledger holds %d events (%v), want none", len(recs), err)
	}
}

// requestOf is the id of forwarder f's one stock request.
func requestOf(t *testing.T, h *Handler) string {
	t.Helper()
	ledger, _, _, err := load(context.Background(), h, ledgerAggregate("f", "020"), domain.EvolveStockLedger, "", loadFresh)
	if err != nil || len(ledger.Ranges) != 1 {
		t.Fatalf("ledger %+v, %v; want one range", ledger, err)
	}
	return ledger.Ranges[0].RequestID
}

// The same on an AWB ledger: after a number is taken again on a replica
// with a stale ledger, for a booking that took it on another replica (a
// retry with the same command id and number), that replica knows the
// numbers used in between, and gives none of them to another booking.
func TestANumberTakenAgainOnAReplicaWithAStaleLedgerLeavesNoUsedNumberToGiveAgain(t *testing.T) {
	h1, _ := stockedWorld(t, t.TempDir(), 10)
	ctx := context.Background()
	if _, _, _, err := load(ctx, h1, ledgerAggregate("f", "020"), domain.EvolveStockLedger, "", loadFresh); err != nil {
		t.Fatal(err)
	}
	h2 := New(h1.store, 4, builtinReference())
	meta := func(id string) Meta { return NewMeta(domain.Principal{Subject: "reactor:awb"}, id, "") }
	n1, err := h2.takeAWB(ctx, meta("c1"), "f", "020", "", "b1")
	if err != nil || n1 == "" {
		t.Fatalf("b1: %q, %v", n1, err)
	}
	_, s1 := domain.AWBSerial(n1)
	n3 := domain.AWBNumber("020", s1+2)
	if got, err := h2.takeAWB(ctx, meta("c2"), "f", "020", n3, "b2"); err != nil || got != n3 {
		t.Fatalf("b2: %q, %v", got, err)
	}
	// b2's step again, on replica 1.
	if got, err := h1.takeAWB(ctx, meta("c2"), "f", "020", n3, "b2"); err != nil || got != n3 {
		t.Fatalf("b2 again: %q, %v", got, err)
	}
	n, err := h1.takeAWB(ctx, meta("c3"), "f", "020", "", "b3")
	if err != nil {
		t.Fatal(err)
	}
	if n == n1 {
		t.Errorf("b3 got %s, which b1 holds", n)
	}
	recs, _ := h1.store.Load(ctx, ledgerAggregate("f", "020"))
	holders := map[string][]string{}
	for _, r := range recs {
		if e, err := domain.DecodeEvent(r.Type, r.Data); err == nil {
			if u, ok := e.(domain.AWBNumberUsed); ok {
				holders[u.AWBNumber] = append(holders[u.AWBNumber], u.Reference)
			}
		}
	}
	for awb, refs := range holders {
		if len(refs) > 1 {
			t.Errorf("AWB %s stored as used by %v", awb, refs)
		}
	}
}

// hookedSubmits is the event store that runs hook, once armed, right
// before it takes a decision that touches agg: what another replica
// stores between a decision and its storing.
type hookedSubmits struct {
	*eventstore.Store
	agg   domain.Aggregate
	armed atomic.Bool
	hook  func()
}

func (s *hookedSubmits) Submit(ctx context.Context, parts ...domain.Submission) ([]domain.PendingAppend, error) {
	for _, p := range parts {
		if p.Aggregate == s.agg && s.armed.CompareAndSwap(true, false) {
			s.hook()
		}
	}
	return s.Store.Submit(ctx, parts...)
}

// A reply that shrinks a forwarder's range, while the forwarder uses a
// number of the part taken back (on another replica, after the reply was
// decided and before it is stored), is refused: the prefix does not take
// the number back, and no other forwarder's stock gets it.
func TestAReplyShrinkingARangeWhileANumberOfItIsUsedGivesThatNumberToNobodyElse(t *testing.T) {
	dir := t.TempDir()
	h, _ := stockedWorld(t, dir, 10)
	raw := h.store.(*eventstore.Store)
	hooked := &hookedSubmits{Store: raw, agg: ledgerAggregate("f", "020")}
	h.store = hooked
	ctx := context.Background()
	lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	reqF := requestOf(t, h)
	ledger, _, _, _ := load(ctx, h, ledgerAggregate("f", "020"), domain.EvolveStockLedger, "", loadFresh)
	old := ledger.Ranges[0].Range
	seventh := domain.AWBNumber("020", old.First+6)
	other := New(raw, 4, builtinReference()) // another replica confirms a booking of f's meanwhile
	hooked.hook = func() {
		if _, err := other.takeAWB(ctx, NewMeta(domain.Principal{Subject: "reactor:awb"}, "use-7", ""), "f", "020", seventh, "booking-f"); err != nil {
			t.Errorf("f's use of %s: %v", seventh, err)
		}
	}
	hooked.armed.Store(true)
	five := 5
	today := h.now().UTC().Format("2006-01-02")
	if _, err := h.ReplyStock(ctx, NewMeta(lh, "shrink", ""), reqF, domain.ReplyStock{Status: domain.StockStatusPartiallyApproved,
		AllocatedStock: &five, ValidFrom: today, ValidTo: validToAsAsked()}, projections.NewShipments()); domain.ErrorCode(err) != domain.Conflict {
		t.Errorf("the shrinking reply = %v, want a conflict: a number it would take back is used", err)
	}

	// Forwarder g asks for 5 numbers and gets them.
	g := domain.Principal{Subject: "client:g", OrganizationID: "g", Role: domain.RoleForwarder}
	req, err := h.RequestStock(ctx, NewMeta(g, "g-request", ""), domain.RequestStock{AirlinePrefix: "020", RequestedStock: &five,
		ValidityPeriod: new(12)}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ReplyStock(ctx, NewMeta(lh, "g-reply", ""), req.State.ID, domain.ReplyStock{Status: domain.StockStatusApproved,
		AllocatedStock: &five, ValidFrom: today, ValidTo: validToAsAsked()}, projections.NewShipments()); err != nil {
		t.Fatal(err)
	}
	n, err := h.takeAWB(ctx, NewMeta(domain.Principal{Subject: "reactor:awb"}, "g-use-7", ""), "g", "020", seventh, "booking-g")
	if err == nil {
		t.Errorf("AWB %s, used by f's booking, was given to g's booking too (%s)", seventh, n)
	}
}

// An airline that approved a range of its choosing and then approves
// fewer numbers of the request, without naming them, shrinks the range it
// gave: the forwarder keeps the first of its numbers, those it used among
// them, rather than the reply moving its stock to the prefix's lowest free
// numbers and being refused for taking back the numbers used.
func TestAPartialApprovalAfterAnApprovalOfAGivenRangeKeepsTheNumbersAlreadyUsed(t *testing.T) {
	store, err := eventstore.Open(context.Background(), eventstore.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	h := New(store, 4, builtinReference())
	ctx := context.Background()
	fwd := domain.Principal{Subject: "client:f", OrganizationID: "f", Role: domain.RoleForwarder}
	lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	hundred, fifty := 100, 50
	req, err := h.RequestStock(ctx, NewMeta(fwd, "request", ""), domain.RequestStock{AirlinePrefix: "020", RequestedStock: &hundred,
		ValidityPeriod: new(12)}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	today := h.now().UTC().Format("2006-01-02")
	given := domain.AWBRange{First: 8114070, Count: 100}
	if _, err := h.ReplyStock(ctx, NewMeta(lh, "approve", ""), req.State.ID, domain.ReplyStock{Status: domain.StockStatusApproved,
		AllocatedStock: &hundred, ValidFrom: today, ValidTo: validToAsAsked(),
		StartNumber: domain.AWBNumber("020", given.First), EndNumber: domain.AWBNumber("020", given.Last())}, projections.NewShipments()); err != nil {
		t.Fatal(err)
	}
	var used []string
	for i := range 3 {
		n, err := h.takeAWB(ctx, NewMeta(fwd, "", ""), "f", "020", "", fmt.Sprint("booking-", i))
		if err != nil {
			t.Fatal(err)
		}
		used = append(used, n)
	}
	res, err := h.ReplyStock(ctx, NewMeta(lh, "partially", ""), req.State.ID, domain.ReplyStock{Status: domain.StockStatusPartiallyApproved,
		AllocatedStock: &fifty, ValidFrom: today, ValidTo: validToAsAsked()}, projections.NewShipments())
	if err != nil {
		t.Fatalf("approving 50 of the 100 numbers given, 3 of them used (%v): %v", used, err)
	}
	if want := (domain.AWBRange{First: given.First, Count: 50}); res.State.Range != want || res.State.AllocatedStock != 50 {
		t.Errorf("the request holds %+v, %d allocated; want %+v, 50", res.State.Range, res.State.AllocatedStock, want)
	}
	ledger, _, _, err := load(ctx, h, ledgerAggregate("f", "020"), domain.EvolveStockLedger, "", loadFresh)
	if err != nil {
		t.Fatal(err)
	}
	if ledger.Allocated() != 50 || len(ledger.Used) != 3 || ledger.Available(today) != 47 {
		t.Errorf("ledger: %d allocated, %d used, %d available; want 50, 3, 47", ledger.Allocated(), len(ledger.Used), ledger.Available(today))
	}
}

// A document of a shipment that is the forwarder's by its stock alone
// and the airline's taking the number back meet at the forwarder's
// ledger: whichever is stored first, the other is refused, and the
// forwarder's records never sit on a number it no longer holds.
func TestAFilingOnANumberInStockAndTheNumbersTakingBackAreNeverBothStored(t *testing.T) {
	ctx := context.Background()
	forwarder := domain.Principal{Subject: "client:f1", OrganizationID: "f1", Role: domain.RoleForwarder}
	held := domain.LedgerRange{RequestID: "r1", Range: domain.AWBRange{First: 100, Count: 10}, ValidFrom: "2026-01-01", ValidTo: "2099-12-31"}
	awb := domain.AWBNumber("020", 104)
	upload := func(h *Handler) error {
		_, err := h.UploadDocument(ctx, NewMeta(forwarder, "", ""), domain.DocumentUploaded{AWBNumber: awb, DocumentType: "INVOICE",
			FileName: "invoice.pdf", ContentType: "application/pdf", Size: 3, SHA256: "00"}, "f1")
		return err
	}
	// The reply's part on the ledger: the range taken back whole.
	takeBack := func(h *Handler) error {
		_, err := execute(ctx, h, ledgerAggregate("f1", "020"), NewMeta(forwarder, "", ""), domain.EvolveStockLedger,
			func(l domain.StockLedger) ([]domain.Event, error) {
				return domain.DecideSetStock(l, "f1", "020", domain.LedgerRange{RequestID: "r1"}, func(int) bool { return false })
			})
		return err
	}
	for _, tt := range []struct {
		name          string
		first, second func(*Handler) error
		refused       domain.ErrorClass
	}{
		{"the document first: the taking back is refused", upload, takeBack, domain.Conflict},
		{"the taking back first: the document is refused", takeBack, upload, domain.Forbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := New(storetest.Open(t), 4, builtinReference())
			_, err := execute(ctx, h, ledgerAggregate("f1", "020"), NewMeta(forwarder, "", ""), domain.EvolveStockLedger,
				func(domain.StockLedger) ([]domain.Event, error) {
					return []domain.Event{domain.StockAllocated{OrganizationID: "f1", Prefix: "020", Range: held}}, nil
				})
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.first(h); err != nil {
				t.Fatal(err)
			}
			if err := tt.second(h); domain.ErrorCode(err) != tt.refused {
				t.Errorf("the second = %v, want %s", err, tt.refused)
			}
		})
	}
}
