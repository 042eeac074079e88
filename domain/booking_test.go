package domain

import (
	"testing"
	"time"
)

func TestDecideCancelBooking(t *testing.T) {
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	booking := func(status string) Booking { return Booking{ID: "b1", FlightID: "LH8400-2026-11-26", Status: status} }
	flight := func(status string) Flight { return Flight{ID: "LH8400-2026-11-26", Status: status} }
	tests := []struct {
		name string
		b    Booking
		f    Flight
		want string // "cancelled", "" for no change, or the error's code
	}{
		{"confirmed", booking(BookingStatusConfirmed), flight(FlightStatusScheduled), "cancelled"},
		{"pending, flight delayed", booking(BookingStatusPending), flight(FlightStatusDelayed), "cancelled"},
		{"flight cancelled", booking(BookingStatusConfirmed), flight(FlightStatusCancelled), "cancelled"},
		{"cancelled already", booking(BookingStatusCancelled), flight(FlightStatusDeparted), ""},
		{"rejected", booking(BookingStatusRejected), flight(FlightStatusScheduled), "conflict"},
		{"flight departed", booking(BookingStatusConfirmed), flight(FlightStatusDeparted), "conflict"},
		{"flight arrived", booking(BookingStatusConfirmed), flight(FlightStatusArrived), "conflict"},
		{"no booking", Booking{}, flight(FlightStatusScheduled), "not_found"},
	}
	for _, tt := range tests {
		events, err := DecideCancelBooking(tt.b, tt.f, "", at)
		got := problemOf(err)
		if err == nil && len(events) == 1 {
			got = "cancelled"
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}
