package webhooks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/retry"
	"github.com/google/uuid"
)

// DefaultSchedule is how long to wait before each retry; after the last,
// a delivery is dead-lettered.
var DefaultSchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// Subscriptions is the read model of webhook subscriptions.
type Subscriptions interface {
	Webhook(id string) (domain.Webhook, bool)
	Matching(name string, seq uint64) []domain.Webhook
	AnyLive(seq uint64) bool
	RegisteredAt(id string) uint64 // the stream sequence of its registration
	// Attempts is how many attempts of the delivery id of subscription
	// webhookID the delivery log holds, and the delivery's status.
	Attempts(webhookID, id string) (n int, status string)
}

// Render turns an event of an aggregate into the payload's data for a
// subscriber: the resource as the API returns it to that organisation,
// and false when the organisation may not see it (see views.Renderer).
type Render func(aggregateType, aggregateID string, e domain.Event, subscriber string) (any, bool)

// Recorder appends what the dispatcher learns.
type Recorder interface {
	// RecordDelivery records an attempt; correlationID, when not empty, is
	// the X-Request-Id of the request that asked for it (a ping or a
	// redelivery), which its event is recorded under.
	RecordDelivery(ctx context.Context, commandID, correlationID string, e domain.WebhookDeliveryAttempted) error
	DisableWebhook(ctx context.Context, commandID, webhookID, reason string) (sequence uint64, err error)
}

// ReadModels are this replica's read models (projections.Projector
// implements it): the stream sequence they have applied, a wait until
// they have applied one, and whether one is past the stream's end.
type ReadModels interface {
	Applied() uint64
	WaitFor(ctx context.Context, seq uint64) error
	PastEnd(ctx context.Context, seq uint64) bool
}

// Events is what the dispatcher reads of the event log (eventstore.Store
// implements it): every event, through a consumer all replicas share that
// hands each to one of them, again until it is handled; and the events at
// given stream sequences.
type Events interface {
	Consume(ctx context.Context, name string, filters []string, parallel int, fn func(domain.Record) error, onError func(domain.Record, error))
	RecordsAt(ctx context.Context, seqs []uint64) ([]domain.Record, error)
}

// Queue holds the deliveries waiting to be sent (eventstore.Queue
// implements it): Put adds jobs by id, once each within an hour, to be
// handed out when due; Work hands them to fn, which returns 0 when a job is
// done or how long to wait before it is handed out again; Waiting reports
// whether a job put due later is stored and not due yet.
type Queue interface {
	Put(ctx context.Context, jobs ...domain.Job) error
	Work(ctx context.Context, parallel int, fn func(ctx context.Context, id string, data []byte, handout int) (later time.Duration))
	Waiting(ctx context.Context, id string) (bool, error)
	Cancel(ctx context.Context, id string) error
}

// Dispatcher turns events into deliveries and delivers them.
type Dispatcher struct {
	Events Events
	Queue  Queue
	Subs   Subscriptions
	Render Render
	// Receives is whether an organisation's subscriptions may be sent
	// anything now (views.Renderer.Receives): a delivery queued or
	// waiting for its turn when its organisation was disabled or
	// deleted is dropped, as its subscriptions are sent no new event.
	Receives func(orgID string) bool
	Recorder Recorder
	Readers  ReadModels
	Sealer   *Sealer
	Guard    Guard
	Schedule []time.Duration
	Log      *slog.Logger
	Parallel int // events turned into deliveries at once
	// InHand bounds the deliveries taken from the queue at once, whether
	// being sent, waiting for their subscription's turn, or being
	// recorded (Parallel when 0). Recording an attempt waits for a disk
	// flush; it holds no subscription's turn, so a burst is sent while
	// the attempts before it are being stored.
	InHand int
	// PerSubscription bounds the requests under way to one subscription
	// (InHand when 0): a burst goes out in parallel, and a slow receiver
	// holds no more connections than this, nor more than a quarter more
	// of the deliveries in hand waiting for one (see turns).
	PerSubscription int
	// PerOrganisation bounds the deliveries of one organisation's
	// subscriptions in hand at once (when 0, a quarter of InHand, and at
	// least what two subscriptions may hold): an organisation whose
	// receivers stop answering holds no more of the queue's workers, and
	// the others' deliveries go on meanwhile.
	PerOrganisation int
	// Attempted, if set, hears the outcome of every delivery attempt
	// (domain.DeliveryDelivered, DeliveryRetrying or DeliveryDead).
	Attempted func(outcome string)
	client    *http.Client
	// previousKey holds the subscriptions logged as sealed with the key
	// being replaced (see notePreviousKey).
	previousKey sync.Map
	// failing holds the subscriptions whose last attempt here failed
	// (see noteHealth).
	failing sync.Map

	sending sync.WaitGroup // first attempts under way, some without their event (see awaitFirstAttempts)

	mu     sync.Mutex
	turns  map[string]*turns // by webhook id
	heldBy map[string]int    // deliveries from the queue in hand, by organisation
}

// job is one delivery: made by the dispatcher, and queued when it waits.
type job struct {
	DeliveryID string `json:"deliveryId"`
	WebhookID  string `json:"webhookId"`
	EventName  string `json:"eventName"`
	EventID    string `json:"eventId"`
	EventSeq   uint64 `json:"eventSequence"`
	// MessageID is the webhook-id of a redelivery: its original's.
	// Empty: domain.MessageIDOf(DeliveryID).
	MessageID string `json:"messageId,omitempty"`
	// CorrelationID is the X-Request-Id of the request that caused the
	// event, sent as Cargo-Correlation-Id: the receiver's logs lead to
	// cargoctl trace and the resource's history.
	CorrelationID string          `json:"correlationId,omitempty"`
	Body          json.RawMessage `json:"body"`
	// RequestedBy and RequestID are, of a ping or a redelivery, the
	// subject of the credential that asked for it and its request's
	// X-Request-Id: its attempts are recorded as that subject's, under
	// that id, so that the audit log says who asked and cargoctl trace
	// finds them (before, they were the dispatcher's, under the
	// delivery's id alone).
	RequestedBy string `json:"requestedBy,omitempty"`
	RequestID   string `json:"requestId,omitempty"`
	// Tried is the attempts made before the job was queued. (Jobs
	// queued by versions before the queue held jobs until due carry a
	// retryAt too, ignored: such a job is attempted, early, when handed
	// out, or requeued at once if it was handed out before.)
	Tried int `json:"tried,omitempty"`
	// Requeued is how many jobs of the delivery came before this one
	// (see Dispatcher.requeue).
	Requeued int `json:"requeued,omitempty"`
	// KnownAt is the sequence the read models of the replica that queued
	// a ping or a redelivery had applied, or its subscription's
	// registration if later (see enqueue): the subscription is in the
	// stream by then, as it is before EventSeq for an event's delivery.
	// A replica whose read models do not know the subscription yet waits
	// for them to get there (see send). 0 in jobs queued by versions
	// before it.
	KnownAt uint64 `json:"knownAt,omitempty"`
}

var deliveryNamespace = uuid.MustParse("3f0f6c1e-5a9b-4c1d-8e2f-7b6a5d4c3b2a")

// Run dispatches events and sends deliveries until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) {
	inHand := d.inHand()
	d.client = d.newClient(inHand)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Queue.Work(ctx, inHand, d.send) // until ctx ends, begun again on failure
	}()
	d.Events.Consume(ctx, "webhooks", nil, d.Parallel, func(rec domain.Record) error { return d.dispatch(ctx, rec) },
		func(rec domain.Record, err error) {
			d.Log.Error("webhook dispatch failed on an event: it is tried again, and parked after CARGO_REACTOR_ATTEMPTS failures in a row", "sequence", rec.Sequence, "err", err)
		})
	<-done
	d.sending.Wait()
	d.client.CloseIdleConnections()
}

// dispatch delivers the event to each subscription that wants it and may
// see it. The first attempts are made here, at once, rather than after a
// round through the queue (a stored job, then a worker's pull): the event
// is acknowledged only once they are made, and the retries they call for
// are queued, or once a job stands in for those still under way after
// inlineWait (see awaitFirstAttempts), so a crash part way makes the event
// come again, or the stand-in come due, and nothing is lost. A delivery
// whose subscription has as many requests under way as
// it may is queued untried instead, so that a slow receiver holds up no
// other subscription's deliveries. Delivery ids follow from subscription
// and event, so a redelivered event queues nothing twice.
func (d *Dispatcher) dispatch(ctx context.Context, rec domain.Record) error {
	if !domain.IsWebhookEvent(rec.Type) {
		return nil // an attempt, a key, an organisation...: no webhook event
	}
	if err := d.Readers.WaitFor(ctx, rec.Sequence); err != nil {
		return err
	}
	// Most events go to nobody: they are not decoded, which cost as much
	// CPU under write load as the read models' own decoding of them.
	if !d.Subs.AnyLive(rec.Sequence) {
		return nil
	}
	e, err := domain.DecodeEvent(rec.Type, rec.Data)
	if err != nil {
		return nil // not an event this version knows: nothing to deliver
	}
	name := domain.WebhookEventOf(e)
	if name == "" {
		return nil
	}
	// Every payload is made before the first request: a Render that
	// panics or a payload that cannot be encoded, part way through, would
	// make the event come again, and its first attempts be made again.
	var deliveries []delivery
	for _, w := range d.Subs.Matching(name, rec.Sequence) {
		data, ok := d.Render(rec.Aggregate.Type, rec.Aggregate.ID, e, w.OrganizationID)
		if !ok {
			continue
		}
		body, err := payload(name, rec.OccurredAt, data)
		if err != nil {
			return err
		}
		deliveries = append(deliveries, delivery{w, job{DeliveryID: uuid.NewSHA1(deliveryNamespace, []byte(w.ID+"/"+rec.EventID)).String(), WebhookID: w.ID,
			EventName: name, EventID: rec.EventID, EventSeq: rec.Sequence, CorrelationID: rec.CorrelationID, Body: body}})
	}
	// From here on the deliveries are made, recorded and queued even if
	// shutdown begins: a request under way is not cut off after the
	// receiver may have acted on it (as in Queue.Work).
	ctx = context.WithoutCancel(ctx)
	var mu sync.Mutex
	var failed error // the first job not queued: the event comes again
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		failed = cmp.Or(failed, err)
	}
	var attempts []domain.WebhookDeliveryAttempted
	var untried []delivery
	var inline []*firstAttempt
	var sends sync.WaitGroup
	for _, dl := range deliveries {
		w, j := dl.w, dl.j
		turn := d.turn(w.ID)
		if !turn.takeFree() {
			untried = append(untried, dl)
			continue
		}
		// The turn may be one a 410 gave back since the subscription was
		// matched: it goes as it is now (see attempt).
		w, live := d.asNow(w, turn)
		if !live {
			continue
		}
		a := &firstAttempt{j: j, finished: make(chan struct{})}
		inline = append(inline, a)
		sends.Add(1)
		d.sending.Go(func() {
			defer sends.Done()
			attempt, retryIn := d.attempt(ctx, w, j, 1)
			turn.done()
			mu.Lock()
			detached := a.detached
			a.over = !detached
			mu.Unlock()
			if detached {
				d.finishDetached(ctx, a, attempt, retryIn)
				return
			}
			defer close(a.finished)
			if retryIn > 0 {
				// Queued at once, not after the event's other first
				// attempts: a receiver that does not answer would hold
				// this retry past its due time.
				var err error
				if attempt, err = d.queueRetry(ctx, j, attempt); err != nil {
					fail(err)
				}
			}
			mu.Lock()
			attempts = append(attempts, attempt)
			mu.Unlock()
		})
	}
	if len(untried) > 0 { // while the first attempts are made
		gaveUp, err := d.queueUntried(ctx, untried)
		if err != nil {
			fail(err)
		}
		mu.Lock()
		attempts = append(attempts, gaveUp...)
		mu.Unlock()
	}
	d.awaitFirstAttempts(ctx, &sends, &mu, inline)
	for _, a := range inline {
		if !a.detached { // set before awaitFirstAttempts returned
			<-a.finished
		}
	}
	// Retries are queued before the attempts are recorded: a crash in
	// between leaves an attempt unrecorded, never a retry unqueued.
	if failed != nil {
		return failed // the event comes again
	}
	var records sync.WaitGroup
	for _, a := range attempts {
		// A first attempt is one per delivery, whatever job comes
		// after: an event that comes again makes it again, and
		// records it once.
		records.Go(func() { d.record(ctx, "delivery:"+a.DeliveryID+":1", "", a) }) // together, in one group commit
	}
	records.Wait()
	return nil
}

// delivery is one of an event's deliveries: to w, as j.
type delivery struct {
	w domain.Webhook
	j job
}

// queueUntried queues deliveries whose subscription had no turn free. One
// too large for the queue can never be queued: it is given up, not sent,
// with an attempt recorded dead that says so, and the others are queued
// still. It returns those given up, or what else kept them from the queue.
func (d *Dispatcher) queueUntried(ctx context.Context, untried []delivery) ([]domain.WebhookDeliveryAttempted, error) {
	jobs := make([]domain.Job, len(untried))
	for i, dl := range untried {
		raw, err := json.Marshal(dl.j)
		if err != nil {
			return nil, err
		}
		jobs[i] = domain.Job{ID: dl.j.DeliveryID, Data: raw}
	}
	err := d.put(ctx, jobs...)
	if domain.ErrorCode(err) != domain.PayloadTooLarge {
		return nil, err
	}
	var gaveUp []domain.WebhookDeliveryAttempted
	for i, dl := range untried {
		err := d.put(ctx, jobs[i])
		switch {
		case domain.ErrorCode(err) == domain.PayloadTooLarge:
			d.Log.Error("webhook delivery too large to queue while its subscription had no turn free: given up, not sent", "delivery", dl.j.DeliveryID, "err", err)
			gaveUp = append(gaveUp, dl.j.notSent(dl.w.ID, dl.w.OrganizationID, 1, "too large to queue while the subscription had no turn free"))
		case err != nil:
			return gaveUp, err
		}
	}
	return gaveUp, nil
}

// firstAttempt is an event's first attempt at one delivery, made while
// the event is in hand. over: the attempt ended and the event waits for
// its retry to be queued (finished is closed then); detached: the event
// went on without it, and it finishes on its own (see finishDetached).
type firstAttempt struct {
	j        job
	over     bool
	detached bool
	finished chan struct{}
	standIn  string // the id of the job standing in for it, once detached
}

const (
	// inlineWait is how long an event waits for its first attempts. A
	// receiver that does not answer would otherwise hold the event for
	// its 15 s timeout, and the resource's next events, which are
	// dispatched in order, to every subscription.
	inlineWait = 2 * time.Second
	// standInDue is when the job that stands in for a first attempt the
	// event went on without comes due, should the attempt never finish
	// (a crash): after the attempt's own timeout and the minute its
	// retry may take to be queued, before the stand-in is taken out.
	standInDue = 3 * time.Minute
)

// awaitFirstAttempts waits for an event's first attempts for up to
// inlineWait. Those still under way then go on without the event, each
// with a job queued in its stead, due after standInDue, which the
// attempt takes out of the queue once it is over and its retry queued: so
// a crash meanwhile loses no delivery (though it may leave the attempt
// unrecorded). If those jobs cannot be queued, it waits for every
// attempt.
func (d *Dispatcher) awaitFirstAttempts(ctx context.Context, sends *sync.WaitGroup, mu *sync.Mutex, inline []*firstAttempt) {
	over := make(chan struct{})
	go func() { sends.Wait(); close(over) }()
	select {
	case <-over:
		return
	case <-time.After(inlineWait):
	}
	mu.Lock()
	var slow []*firstAttempt
	for _, a := range inline {
		if !a.over {
			slow = append(slow, a)
		}
	}
	mu.Unlock()
	standIns := make([]domain.Job, 0, len(slow))
	for _, a := range slow {
		raw, err := json.Marshal(a.j)
		if err != nil {
			<-over
			return
		}
		// An id of its own each time: the queue keeps an id once an
		// hour, cancelled or not, and the event may come again.
		a.standIn = a.j.DeliveryID + standInMark + uuid.NewString()
		standIns = append(standIns, domain.Job{ID: a.standIn, Data: raw, Due: time.Now().Add(standInDue)})
	}
	if err := d.put(ctx, standIns...); err != nil {
		d.Log.Warn("webhook event waits for its slow first attempts: their stand-ins could not be queued", "err", err)
		// Some may have been stored all the same; the store has just
		// failed to answer, so these tries are brief.
		brief, cancel := context.WithTimeout(ctx, subscriptionWait)
		for _, a := range slow {
			d.cancel(brief, a)
		}
		cancel()
		<-over
		return
	}
	var needless []*firstAttempt
	mu.Lock()
	for _, a := range slow {
		if a.over {
			needless = append(needless, a) // it ended meanwhile
		} else {
			a.detached = true
		}
	}
	mu.Unlock()
	for _, a := range needless {
		d.cancel(ctx, a)
	}
}

// finishDetached finishes a first attempt that its event went on
// without: it queues the retry, takes the job that stood in for it out of
// the queue, and records the attempt. If the retry cannot be queued,
// that job stays, and comes due to make the attempt again.
func (d *Dispatcher) finishDetached(ctx context.Context, a *firstAttempt, attempt domain.WebhookDeliveryAttempted, retryIn time.Duration) {
	var err error
	if retryIn > 0 {
		attempt, err = d.queueRetry(ctx, a.j, attempt)
	}
	if err != nil {
		d.Log.Warn("webhook retry not queued: the job standing in for its first attempt makes it again", "delivery", a.j.DeliveryID, "err", err)
	} else {
		d.cancel(ctx, a)
	}
	d.record(ctx, "delivery:"+a.j.DeliveryID+":1", a.j.RequestID, attempt)
}

// cancel takes the job standing in for a first attempt out of the queue,
// trying again while the store does not answer. Left there, it comes due,
// and the delivery is attempted again under the same webhook-id.
func (d *Dispatcher) cancel(ctx context.Context, a *firstAttempt) {
	if err := retry.WhileUnavailable(ctx, func() error { return d.Queue.Cancel(ctx, a.standIn) }); err != nil {
		d.Log.Warn("webhook job standing in for a first attempt not taken out: the delivery is made again when it comes due, unless the attempt is in the delivery log by then", "delivery", a.j.DeliveryID, "err", err)
	}
}

// queueRetry queues the retry that attempt, j's first, calls for, and
// returns the attempt as it is to be recorded. A retry too large for the
// queue can never be queued, and the event coming again would not change
// that: the attempt is then its delivery's last, dead.
func (d *Dispatcher) queueRetry(ctx context.Context, j job, attempt domain.WebhookDeliveryAttempted) (domain.WebhookDeliveryAttempted, error) {
	j.Tried = 1
	raw, err := json.Marshal(j)
	if err == nil {
		err = d.put(ctx, domain.Job{ID: j.DeliveryID, Data: raw, Due: attempt.NextTryAt})
	}
	if domain.ErrorCode(err) == domain.PayloadTooLarge {
		d.Log.Error("webhook delivery too large to queue a retry: given up after its first attempt", "delivery", j.DeliveryID, "err", err)
		return tooLargeToRetry(attempt), nil
	}
	return attempt, err
}

// tooLargeToRetry is attempt as its delivery's last, dead: its retry is too
// large for the queue.
func tooLargeToRetry(attempt domain.WebhookDeliveryAttempted) domain.WebhookDeliveryAttempted {
	attempt.Outcome, attempt.NextTryAt = domain.DeliveryDead, time.Time{}
	attempt.Error += "; too large to queue a retry"
	return attempt
}

// payload is the body of a delivery, fixed when the delivery is made so
// that every retry sends the same bytes.
func payload(eventName string, at time.Time, data any) (json.RawMessage, error) {
	return json.Marshal(struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
		Data      any       `json:"data"`
	}{eventName, at.UTC(), data})
}

// enqueue queues one delivery to a subscription this replica's read
// models know.
func (d *Dispatcher) enqueue(ctx context.Context, j job, at time.Time, data any) error {
	body, err := payload(j.EventName, at, data)
	if err != nil {
		return err
	}
	// The read models move their applied sequence once every model has
	// an event: a subscription just registered may be known a sequence
	// before it.
	j.Body, j.KnownAt = body, max(d.Readers.Applied(), d.Subs.RegisteredAt(j.WebhookID))
	raw, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return d.Queue.Put(ctx, domain.Job{ID: j.DeliveryID, Data: raw})
}

// Requester is who asked for a ping or a redelivery: the subject of the
// request's credential, and its X-Request-Id (see job.RequestedBy).
type Requester struct {
	Subject   string
	RequestID string
}

// Ping queues a test delivery to a subscription, which by asked for; it
// returns its id.
func (d *Dispatcher) Ping(ctx context.Context, w domain.Webhook, by Requester) (string, error) {
	id := uuid.NewString()
	return id, d.enqueue(ctx, job{DeliveryID: id, WebhookID: w.ID, EventName: "webhook.ping", RequestedBy: by.Subject, RequestID: by.RequestID},
		time.Now(), map[string]string{"webhookId": w.ID, "message": "ping from Cargostream"})
}

// Redeliver queues an earlier delivery again, under a new delivery id,
// its data rendered again from its event (see views.Renderer). It is the
// same message, under the earlier delivery's webhook-id, messageID. by
// asked for it.
func (d *Dispatcher) Redeliver(ctx context.Context, w domain.Webhook, deliveryID, messageID string, eventSeq uint64, by Requester) (string, error) {
	if eventSeq == 0 { // a ping
		return d.Ping(ctx, w, by)
	}
	recs, err := d.Events.RecordsAt(ctx, []uint64{eventSeq})
	if err != nil { // wrapped: a store that does not answer is a 503
		return "", fmt.Errorf("webhooks: the event of delivery %s cannot be read: %w", deliveryID, err)
	}
	rec := recs[0]
	if rec.Sequence == 0 { // deleted from a stream that allows it
		return "", domain.Errorf(domain.NotFound, "the event of that delivery is no longer in the event store")
	}
	e, err := domain.DecodeEvent(rec.Type, rec.Data)
	if err != nil {
		return "", err
	}
	data, ok := d.Render(rec.Aggregate.Type, rec.Aggregate.ID, e, w.OrganizationID)
	if !ok {
		return "", domain.Errorf(domain.NotFound, "the resource of that delivery is no longer visible to you")
	}
	id := uuid.NewString()
	return id, d.enqueue(ctx, job{DeliveryID: id, WebhookID: w.ID, EventName: domain.WebhookEventOf(e), EventID: rec.EventID, EventSeq: eventSeq,
		MessageID: messageID, CorrelationID: rec.CorrelationID, RequestedBy: by.Subject, RequestID: by.RequestID}, rec.OccurredAt, data)
}

// send makes the next attempt at the delivery queued as id with data, on
// the queue's handout-th handout of it, and records it. It returns 0 when
// the job is done (delivered, dead, its subscription gone, or replaced by
// the next job of its delivery), or how long the job waits before it is
// handed out again.
//
// A job is handed out once due, and makes one attempt at most, on its
// first handout: a retry, or a delivery whose subscription has no turn
// free, is a new job (requeue). So a later handout is the job coming back
// after a crash, a lost acknowledgement or a failed requeue, with little
// known of what the handout before did. If its next job waits in the
// queue, that handout stored it, and the job is done. Otherwise it is
// requeued as it is, under the id its next job has, which keeps the job
// once if that handout had stored it already within the queue's
// de-duplication window (an hour).
func (d *Dispatcher) send(ctx context.Context, id string, data []byte, handout int) (later time.Duration) {
	var j job
	if err := json.Unmarshal(data, &j); err != nil {
		d.Log.Error("unreadable webhook job dropped", "id", id, "err", err)
		return 0
	}
	if handout > 1 {
		// Past the window, requeueing would store a second next job
		// beside one that waits (a retry due hours later, after a
		// crash and a restart more than an hour later), and both would
		// attempt. Not known (the queue not answering): requeued.
		if waiting, err := d.Queue.Waiting(ctx, nextID(j)); err == nil && waiting {
			return 0
		}
		return d.putBack(ctx, id, j, 0)
	}
	if standsIn(id) && d.followedUp(ctx, j) {
		return 0
	}
	w, live, err := d.subscription(ctx, j)
	if err != nil {
		// This replica is further behind: the job comes again, maybe to
		// another replica, rather than being dropped.
		d.Log.Warn("webhook delivery to a subscription not known yet put back: the read models are behind", "delivery", j.DeliveryID,
			"webhook", j.WebhookID, "err", err)
		return d.putBack(ctx, id, j, 0)
	}
	if !live {
		d.dropped(ctx, id, j, w)
		return 0 // nobody to deliver to any more
	}
	// Waiting in hand would hold one of the queue's workers, which a
	// burst to a slow receiver could fill, holding up every other
	// subscription's deliveries.
	if !d.hold(w.OrganizationID) {
		return d.putBack(ctx, id, j, putBackDelay(j))
	}
	defer d.letGo(w.OrganizationID)
	turn := d.turn(w.ID)
	if !turn.take() {
		return d.putBack(ctx, id, j, putBackDelay(j))
	}
	// The turn may have come after a wait, during which the receiver
	// answered 410 Gone or the subscription was deleted, disabled or
	// given a new secret: the delivery goes as the subscription is now.
	w, live = d.asNow(w, turn)
	if !live {
		d.dropped(ctx, id, j, w)
		return 0
	}
	try := j.Tried + 1
	attempt, retryIn := d.attempt(ctx, w, j, try)
	turn.done()
	// The retry before the record, as in dispatch.
	if retryIn > 0 {
		var tooLarge bool
		if later, tooLarge = d.requeue(ctx, j, try, retryIn); tooLarge {
			d.Log.Error("webhook delivery too large to queue a retry: given up after this attempt", "delivery", j.DeliveryID, "attempt", try)
			attempt = tooLargeToRetry(attempt)
		}
	}
	// Recorded under the job's id, not its attempt's number: a job whose
	// requeue failed comes again and is requeued with the attempts it
	// came with (see requeue), so the next job may make an attempt of
	// the same number, which must be recorded too. Only a job's first
	// handout attempts, so its id records one attempt.
	d.record(ctx, "delivery:"+id, j.RequestID, attempt)
	return later
}

// standInMark marks the id of a job standing in for a first attempt. Put
// back (no turn free, say), it goes on under its delivery's next id, as
// any job does, and is no stand-in any more: it makes its attempt, as a
// retry of the delivery would otherwise share that id.
const standInMark = "~inline~"

func standsIn(id string) bool { return strings.Contains(id, standInMark) }

// followedUp is whether the first attempt of j, a job standing in for it,
// is made already and followed up: in the delivery log, and its delivery
// over, retried, or its retry waiting in the queue. j then stood in for
// that attempt while it was under way, and the process died before taking
// it out; the event came again and made the attempt meanwhile. Made
// again, it would reach the receiver a third time. A first attempt
// recorded whose retry could not be queued is left to j to make again.
func (d *Dispatcher) followedUp(ctx context.Context, j job) bool {
	n, status := d.Subs.Attempts(j.WebhookID, j.DeliveryID)
	switch {
	case n == 0:
		return false
	case status != domain.DeliveryRetrying || n > 1:
		return true
	}
	waiting, err := d.Queue.Waiting(ctx, j.DeliveryID) // the first retry's id: see queueRetry
	return err == nil && waiting
}

// asNow is subscription w as it is now, once a turn of it was taken:
// false, with the turn given back, if it is no longer live (deleted,
// disabled, or gone by a 410) or its organisation receives nothing now.
func (d *Dispatcher) asNow(w domain.Webhook, turn *turns) (domain.Webhook, bool) {
	now, known := d.Subs.Webhook(w.ID)
	if !known || !now.Live() || !d.Receives(now.OrganizationID) {
		turn.done()
		return now, false
	}
	return now, true
}

// dropped records job j, queued as id and dropped because its
// subscription w takes nothing more, as dead, not sent, when an attempt of
// it is in the delivery log already: that attempt's outcome, "retrying",
// would otherwise stand there for ever. A delivery never attempted is not
// in the log, and a subscription not known has no log to show.
func (d *Dispatcher) dropped(ctx context.Context, id string, j job, w domain.Webhook) {
	if j.Tried == 0 || w.ID == "" {
		return
	}
	why := "the organisation receives no deliveries now"
	switch {
	case w.Deleted:
		why = "the subscription was deleted"
	case w.Disabled:
		why = "the subscription was disabled, its receiver having answered 410 Gone"
	}
	d.record(ctx, "delivery:"+id, j.RequestID, j.notSent(w.ID, w.OrganizationID, j.Tried+1, why))
}

// subscription is the subscription of job j, and whether it is live. The
// replica that queued j knew it, and this one's read models may lag behind
// that replica by milliseconds: only once they have applied what it had
// is a subscription they do not know none. It fails if they do not get
// there within subscriptionWait, unless the stream ends before (restored
// from a backup older than the queue's jobs, say): then no replica will
// ever know it.
func (d *Dispatcher) subscription(ctx context.Context, j job) (domain.Webhook, bool, error) {
	if w, ok := d.Subs.Webhook(j.WebhookID); ok {
		return w, w.Live(), nil
	}
	known := max(j.EventSeq, j.KnownAt)
	wait, cancel := context.WithTimeout(ctx, subscriptionWait)
	defer cancel()
	if err := d.Readers.WaitFor(wait, known); err != nil {
		if d.Readers.PastEnd(ctx, known) {
			d.Log.Warn("webhook delivery dropped: its subscription is past the end of the stream", "delivery", j.DeliveryID,
				"webhook", j.WebhookID, "sequence", known)
			return domain.Webhook{}, false, nil
		}
		return domain.Webhook{}, false, err
	}
	w, ok := d.Subs.Webhook(j.WebhookID)
	return w, ok && w.Live(), nil
}

// requeue puts the next job of j's delivery in the queue: j after tried
// attempts, due in after (at once if 0). Its id follows from j, so a job
// requeued twice (see send) is kept once. It returns 0, or when the job
// could not be stored (see put), how long j waits before it is handed out
// again, and then requeued, due at once, however long after was (the
// attempt it made is then made again under its number, and both are
// recorded): a minute at most, as a put that failed may have been stored,
// and only a put again within the queue's de-duplication window is kept
// once. A next job too large for the queue can never be stored, however
// often j comes again: requeue reports it too large instead, and j is
// done. (The queue took j, but its next job may be larger: due later, it
// is a schedule with a subject and headers of its own, and it counts one
// job more.)
func (d *Dispatcher) requeue(ctx context.Context, j job, tried int, after time.Duration) (later time.Duration, tooLarge bool) {
	id := nextID(j)
	j.Tried, j.Requeued = tried, j.Requeued+1
	raw, err := json.Marshal(j)
	if err == nil {
		err = d.put(ctx, domain.Job{ID: id, Data: raw, Due: time.Now().Add(after)})
	}
	if domain.ErrorCode(err) == domain.PayloadTooLarge {
		return 0, true
	}
	if err != nil {
		d.Log.Warn("webhook delivery not requeued: it comes again", "delivery", j.DeliveryID, "err", err)
		return min(max(after, time.Second), time.Minute), false
	}
	return 0, false
}

// putBack requeues job id, j, untried, due in after (see requeue). One too
// large to go back can never be sent: it is given up, with an attempt
// recorded dead that says so, under the job's id as the attempt its
// handout would have made, so that one an earlier handout recorded
// stands.
func (d *Dispatcher) putBack(ctx context.Context, id string, j job, after time.Duration) (later time.Duration) {
	later, tooLarge := d.requeue(ctx, j, j.Tried, after)
	if !tooLarge {
		return later
	}
	d.Log.Error("webhook delivery too large to go back to the queue: given up, not sent", "delivery", j.DeliveryID, "webhook", j.WebhookID)
	w, _ := d.Subs.Webhook(j.WebhookID)
	d.record(ctx, "delivery:"+id, j.RequestID, j.notSent(j.WebhookID, w.OrganizationID, j.Tried+1, "too large to go back to the queue"))
	return 0
}

// subscriptionWait is how long a job whose subscription this replica does
// not know waits for its read models to get to where the job's queuer
// knew it: they are milliseconds behind, seconds when their connection to
// the stream is lost.
const subscriptionWait = 5 * time.Second

// nextID is the queue's id of the job that comes after j in its delivery.
func nextID(j job) string { return j.DeliveryID + "~" + strconv.Itoa(j.Requeued+1) }

// put stores jobs in the queue, trying again for up to a minute while the
// store is unavailable (the queue's stream electing a leader, say). The
// job or event that called for them is held meanwhile (the queue and the
// event consumer keep what is in hand alive): given up on, it comes
// again, and then a retry due hours later is queued due at once (see
// requeue), or an event's first attempts are made again (see dispatch).
// A job stored by a put that seemed to fail is kept once all the same.
// Both callers finish what they began even once shutdown begins, so
// shutdown may wait for this minute too.
func (d *Dispatcher) put(ctx context.Context, jobs ...domain.Job) error {
	return retry.WhileUnavailable(ctx, func() error { return d.Queue.Put(ctx, jobs...) })
}

// putBackDelay is how long job j waits in the queue when its
// subscription has no turn free: a tenth of a second, doubling with each
// time the delivery was put back before, up to a minute, so that a slow
// receiver's backlog is not busy going round the queue meanwhile. A
// delivery's retries are requeued jobs too, and do not count: its jobs
// less its attempts are (give or take one) its put-backs.
func putBackDelay(j job) time.Duration {
	putBacks := max(j.Requeued-j.Tried, 0)
	return jitter(min(100*time.Millisecond<<min(putBacks, 10), time.Minute))
}

// messageID is the webhook-id of j's attempts.
func (j job) messageID() string {
	if j.MessageID != "" {
		return j.MessageID
	}
	return domain.MessageIDOf(j.DeliveryID)
}

// attemptRecord is the record of the try-th attempt at j, to
// subscription webhookID of organisation orgID, without its outcome.
func (j job) attemptRecord(webhookID, orgID string, try int) domain.WebhookDeliveryAttempted {
	return domain.WebhookDeliveryAttempted{DeliveryID: j.DeliveryID, WebhookID: webhookID, OrgID: orgID, EventName: j.EventName,
		EventID: j.EventID, EventSeq: j.EventSeq, MessageID: j.MessageID, RequestedBy: j.RequestedBy, Attempt: try}
}

// notSent is the record of j given up before its try-th attempt was
// made: dead, not sent, for the reason why.
func (j job) notSent(webhookID, orgID string, try int, why string) domain.WebhookDeliveryAttempted {
	a := j.attemptRecord(webhookID, orgID, try)
	a.Outcome, a.Error, a.At = domain.DeliveryDead, "not sent: "+why, time.Now().UTC()
	return a
}

// attempt makes the try-th attempt at delivering j to w. It returns the
// attempt, to be recorded, and how long to wait before the next, or 0
// when there is none.
func (d *Dispatcher) attempt(ctx context.Context, w domain.Webhook, j job, try int) (domain.WebhookDeliveryAttempted, time.Duration) {
	attempt := j.attemptRecord(w.ID, w.OrganizationID, try)
	start := time.Now()
	status, retryAfter, err := d.post(ctx, w, j)
	attempt.At, attempt.StatusCode, attempt.LatencyMs = time.Now().UTC(), status, time.Since(start).Milliseconds()
	if err != nil {
		attempt.Error = err.Error()
	}
	var retryIn time.Duration
	switch {
	case status >= 200 && status < 300:
		attempt.Outcome = domain.DeliveryDelivered
	case status == http.StatusGone:
		attempt.Outcome = domain.DeliveryDead
		seq, err := d.Recorder.DisableWebhook(ctx, "gone:"+j.DeliveryID, w.ID, "the receiver answered 410 Gone")
		if err != nil {
			d.Log.Error("webhook not disabled", "webhook", w.ID, "err", err)
			break
		}
		// The subscription's turn is given back only once this replica
		// knows it disabled: a delivery waiting for the turn is then
		// dropped, not sent (see send).
		wait, cancel := context.WithTimeout(ctx, subscriptionWait)
		defer cancel()
		if err := d.Readers.WaitFor(wait, seq); err != nil {
			d.Log.Warn("webhook disabled, but the read models did not show it in time", "webhook", w.ID, "err", err)
		}
	case try > len(d.Schedule):
		attempt.Outcome = domain.DeliveryDead
	default:
		// A receiver's Retry-After is a floor, not the schedule: one
		// answering 429 with Retry-After: 1 every time would otherwise
		// have the delivery dead after the schedule's ten tries in ten
		// seconds, where any other failure is tried for three days.
		delay := max(jitter(d.Schedule[try-1]), retryAfter)
		attempt.Outcome, attempt.NextTryAt = domain.DeliveryRetrying, attempt.At.Add(delay)
		retryIn = delay
	}
	// No answer is no status: null, as the delivery log's statusCode
	// shows it, not a 0 that no receiver answered.
	var loggedStatus any
	if status != 0 {
		loggedStatus = status
	}
	if d.Log.Enabled(ctx, slog.LevelDebug) {
		d.Log.Debug("webhook attempt made", "delivery", j.DeliveryID, "webhook", w.ID, "organization", w.OrganizationID,
			"event", j.EventName, "attempt", try, "status", loggedStatus, "outcome", attempt.Outcome, "latencyMs", attempt.LatencyMs, "err", attempt.Error)
	}
	d.noteHealth(w, attempt, loggedStatus)
	if attempt.Outcome == domain.DeliveryDead {
		// Once a delivery, not at each failed attempt: a receiver down for
		// hours does not flood the log, and an operator sees which
		// subscriptions lose events without reading every delivery log.
		d.Log.Warn("webhook delivery given up", "delivery", j.DeliveryID, "webhook", w.ID, "organization", w.OrganizationID,
			"event", j.EventName, "attempt", try, "status", loggedStatus, "err", attempt.Error)
	}
	if d.Attempted != nil {
		d.Attempted(attempt.Outcome)
	}
	return attempt, retryIn
}

// Failing is how many live subscriptions' last attempt by this process
// failed (see noteHealth). One deleted, or disabled by its receiver's
// 410, is forgotten: it is sent nothing more, and would fail for good.
func (d *Dispatcher) Failing() int {
	n := 0
	d.failing.Range(func(id, _ any) bool {
		if w, ok := d.Subs.Webhook(id.(string)); ok && w.Live() {
			n++
		} else {
			d.failing.Delete(id)
		}
		return true
	})
	return n
}

// noteHealth logs once when a subscription's attempts start failing on
// this replica, and once when one is delivered again: failed attempts
// that are tried again are not logged each, and a receiver down was
// logged nowhere until its deliveries were given up, three days later on
// the default schedule, then once a delivery.
func (d *Dispatcher) noteHealth(w domain.Webhook, a domain.WebhookDeliveryAttempted, status any) {
	if a.Outcome == domain.DeliveryDelivered {
		if _, was := d.failing.LoadAndDelete(w.ID); was {
			d.Log.Info("webhook subscription delivers again", "webhook", w.ID, "organization", w.OrganizationID)
		}
		return
	}
	if _, was := d.failing.LoadOrStore(w.ID, true); !was {
		// The receiver's host, not its URL: a token in the path or query
		// is the receiver's credential.
		host := ""
		if u, err := url.Parse(w.URL); err == nil {
			host = u.Host
		}
		d.Log.Warn("webhook subscription failing: its deliveries are tried again on the retry schedule (its delivery log has each attempt)",
			"webhook", w.ID, "organization", w.OrganizationID, "host", host, "status", status, "err", a.Error)
	}
}

// record appends an attempt to the event log, once per commandID. The
// attempt was made: a store that does not answer for a moment is waited
// out (for up to a minute, as put does), or the log would miss a request
// the receiver got.
func (d *Dispatcher) record(ctx context.Context, commandID, correlationID string, a domain.WebhookDeliveryAttempted) {
	err := retry.WhileUnavailable(ctx, func() error { return d.Recorder.RecordDelivery(ctx, commandID, correlationID, a) })
	if err != nil {
		d.Log.Error("webhook attempt not recorded", "delivery", a.DeliveryID, "err", err)
	}
}

// turns are a subscription's requests under way, and the deliveries from
// the queue waiting for one of them: a quarter as many as may be under
// way, enough to take a turn the moment it is free.
type turns struct {
	underWay chan struct{} // one token per request under way
	waiting  atomic.Int32
}

// take takes a turn, waiting for one if few enough deliveries wait
// already; false: none was taken.
func (t *turns) take() bool {
	if t.takeFree() {
		return true
	}
	if t.waiting.Add(1) > int32(max(cap(t.underWay)/4, 1)) {
		t.waiting.Add(-1)
		return false
	}
	t.underWay <- struct{}{}
	t.waiting.Add(-1)
	return true
}

// takeFree takes a turn if one is free, without waiting.
func (t *turns) takeFree() bool {
	select {
	case t.underWay <- struct{}{}:
		return true
	default:
		return false
	}
}

// done gives a turn back.
func (t *turns) done() { <-t.underWay }

// inHand is InHand, or its default.
func (d *Dispatcher) inHand() int { return cmp.Or(d.InHand, d.Parallel) }

// perSubscription is PerSubscription, or its default.
func (d *Dispatcher) perSubscription() int { return max(cmp.Or(d.PerSubscription, d.inHand()), 1) }

// hold counts a delivery from the queue in hand for organisation org,
// unless it has as many as it may; false: it has.
func (d *Dispatcher) hold(org string) bool {
	// One subscription's share is its turns and the deliveries that may
	// wait for one: an organisation may hold two, so that one slow
	// subscription leaves room for its others.
	share := d.perSubscription() + max(d.perSubscription()/4, 1)
	limit := cmp.Or(d.PerOrganisation, max(d.inHand()/4, 2*share))
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.heldBy[org] >= limit {
		return false
	}
	if d.heldBy == nil {
		d.heldBy = map[string]int{}
	}
	d.heldBy[org]++
	return true
}

// letGo counts a delivery of org's out of hand.
func (d *Dispatcher) letGo(org string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.heldBy[org]--; d.heldBy[org] == 0 {
		delete(d.heldBy, org)
	}
}

// turn is the turns of a subscription. They are kept for the life of the
// dispatcher: a few bytes per subscription ever delivered to.
func (d *Dispatcher) turn(webhookID string) *turns {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.turns[webhookID]
	if !ok {
		if d.turns == nil {
			d.turns = map[string]*turns{}
		}
		t = &turns{underWay: make(chan struct{}, d.perSubscription())}
		d.turns[webhookID] = t
	}
	return t
}

// newClient is the client deliveries are sent with: guarded at each
// connection (see Guard), keeping up to inHand idle connections per host.
func (d *Dispatcher) newClient(inHand int) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: d.Guard.control}
	return &http.Client{
		Timeout: 15 * time.Second,
		// Every request may be to one host (subscriptions on different
		// paths of one receiver): each keeps its connection for the
		// next, rather than a new one being dialled per delivery.
		// Idle connections are closed after a while, and all of them
		// once Run returns: a receiver that keeps its end open holds
		// no connection, and no goroutine, of a dispatcher stopped.
		//
		// A receiver's headers are held in memory whole until the last
		// arrives: the transport's default allows 10 MiB each, so a
		// receiver answering endless headers to its 64 requests under way
		// would hold hundreds of MiB. Its answer needs a status, and a
		// Retry-After at most.
		Transport: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: inHand, IdleConnTimeout: 90 * time.Second, Proxy: nil,
			MaxResponseHeaderBytes: maxAnswerHeaders},
		// A redirect is an answer, not an instruction: it is not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// notePreviousKey logs, once a subscription, that its secret is sealed
// with the key being replaced: the operator drops CARGO_WEBHOOK_PREVIOUS_KEY
// once no subscription in use is (README, "Rotating the webhook key").
func (d *Dispatcher) notePreviousKey(w domain.Webhook) {
	if _, logged := d.previousKey.LoadOrStore(w.ID, true); !logged {
		d.Log.Info("webhook secret sealed with CARGO_WEBHOOK_PREVIOUS_KEY", "webhook", w.ID, "organization", w.OrganizationID)
	}
}

// maxAnswerHeaders bounds the size of a receiver's answer's headers; an
// answer with more is a failed attempt.
const maxAnswerHeaders = 64 << 10

// The status is all of an answer a delivery needs. Its body is read only
// so that the connection can carry the next request: up to maxAnswerBody,
// for up to answerBodyWait. A receiver that trickles its body would
// otherwise hold the subscription's turn for the attempt's whole timeout;
// its connection is closed instead.
const (
	maxAnswerBody  = 64 << 10
	answerBodyWait = time.Second
)

// post sends the delivery, signed; it returns the status (0 when there
// was no answer) and a Retry-After the receiver asked for.
func (d *Dispatcher) post(ctx context.Context, w domain.Webhook, j job) (int, time.Duration, error) {
	secret, previous, err := d.Sealer.Open(w.SealedSecret)
	if err != nil {
		return 0, 0, fmt.Errorf("the secret cannot be opened: %w", err)
	}
	if previous {
		d.notePreviousKey(w)
	}
	target := w.URL
	if len(w.SealedUserInfo) > 0 {
		userInfo, _, err := d.Sealer.Open(w.SealedUserInfo)
		if err != nil {
			return 0, 0, fmt.Errorf("the URL's user information cannot be opened: %w", err)
		}
		target = domain.WithUserInfo(w.URL, userInfo)
	}
	ctx, stopReading := context.WithCancel(ctx) // see answerBodyWait
	defer stopReading()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(string(j.Body)))
	if err != nil {
		return 0, 0, err
	}
	ts := time.Now().Unix()
	msgID := j.messageID()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Cargostream-Webhooks/1")
	req.Header.Set("webhook-id", msgID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", Sign(secret, msgID, ts, j.Body))
	if j.CorrelationID != "" {
		req.Header.Set("Cargo-Correlation-Id", j.CorrelationID)
	}
	if j.EventID != "" {
		// The event's own id, the same in every subscription's delivery
		// of it: webhook-id is the delivery's, one per subscription, so
		// a receiver subscribed twice while it moves to a new one (a new
		// secret) could not tell the two deliveries of an event apart.
		req.Header.Set("Cargo-Event-Id", j.EventID)
	}
	resp, err := d.client.Do(req)
	if errors.Is(err, errRefusedTarget) {
		// The error names the address dialled: where the host points
		// now is the operator's to learn, not the subscriber's, whose
		// delivery log shows the error (see Guard.Check). The URL it
		// names is the one shown: Go's client hides the password of
		// the user information, not the user, which may be the
		// credential itself.
		d.Log.Warn("webhook target refused", "webhook", w.ID, "err", withShownURL(err, w))
		return 0, 0, fmt.Errorf("%s is not allowed: a webhook target must be reachable on the public internet", req.URL.Hostname())
	}
	if err != nil {
		return 0, 0, withoutOwnAddresses(withShownURL(err, w))
	}
	defer resp.Body.Close()
	cut := time.AfterFunc(answerBodyWait, stopReading)
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswerBody))
	cut.Stop()
	var retryAfter time.Duration
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		retryAfter = retryAfterOf(resp.Header.Get("Retry-After"), time.Now())
	}
	if resp.StatusCode < 100 {
		// Three digits Go's client takes (099, 000) but no HTTP status:
		// the attempt records no status, as for no answer, which is what
		// the delivery log's statusCode (100–999, or null) can say.
		return 0, 0, fmt.Errorf("the receiver answered %s, which is no HTTP status", statusOf(resp))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err = fmt.Errorf("the receiver answered %s", statusOf(resp))
	}
	return resp.StatusCode, retryAfter, err
}

// withShownURL is a request's err naming w's URL as its organisation is
// shown it (see domain.Webhook.ShownURL): Go's client hides the password
// of the URL it names, not the user.
func withShownURL(err error, w domain.Webhook) error {
	if u := (*url.Error)(nil); errors.As(err, &u) {
		u.URL = w.ShownURL()
	}
	return err
}

// withoutOwnAddresses is err as the delivery log shows it: without the
// addresses of the operator's network, not the subscriber's to learn,
// which a connection's error names: this replica's own beside the
// receiver's ("read tcp 10.0.0.5:41234->203.0.113.9:443: ... reset by
// peer"), and the DNS server's ("lookup hooks.example on 10.0.0.2:53: no
// such host").
func withoutOwnAddresses(err error) error {
	msg := err.Error()
	if op := (*net.OpError)(nil); errors.As(err, &op) && op.Source != nil {
		msg = strings.Replace(msg, op.Source.String()+"->", "", 1)
	}
	if dns := (*net.DNSError)(nil); errors.As(err, &dns) && dns.Server != "" {
		msg = strings.Replace(msg, " on "+dns.Server, "", 1)
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// maxReason bounds the reason phrase of a receiver's status kept in the
// delivery log.
const maxReason = 64

// statusOf is resp's status line as the delivery log shows it: the code,
// and the receiver's reason phrase up to maxReason bytes. Every attempt is
// stored for good in the event log, and a receiver may send a reason of
// all the 64 KiB of headers it may answer.
func statusOf(resp *http.Response) string {
	reason := strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)+" ")
	if len(reason) <= maxReason {
		return resp.Status
	}
	cut := maxReason
	for cut > 0 && !utf8.RuneStart(reason[cut]) { // not in the middle of a character
		cut--
	}
	return fmt.Sprintf("%d %s…", resp.StatusCode, reason[:cut])
}

// retryAfterOf is the wait a Retry-After header asks for at now, in
// seconds or as an HTTP date, at most a day; 0 if it asks for none, or
// cannot be read.
func retryAfterOf(header string, now time.Time) time.Duration {
	var wait time.Duration
	// Too many digits for an int64 read as its largest, then capped.
	if secs, err := strconv.ParseInt(header, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		wait = time.Duration(min(max(secs, 0), 24*60*60)) * time.Second // clamped first: no overflow
	} else if at, err := http.ParseTime(header); err == nil {
		wait = at.Sub(now)
	}
	return min(max(wait, 0), 24*time.Hour)
}

// jitter spreads a delay by up to a fifth either way, so retries of many
// deliveries do not arrive together.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}
