// Package domain holds Cargostream's business rules: aggregates, the pure
// decisions that turn commands into events, value types that validate
// themselves, the access rules (who may see or file what, given the facts
// the read models hold), and the error codes every layer speaks. It also
// names what the event log holds (eventlog.go: Aggregate, Envelope,
// Record and the store's errors), so that the layers above the store speak
// of events without importing it. It imports neither NATS nor HTTP.
package domain

import (
	"errors"
	"fmt"
)

// ErrorClass classifies an error as a whole. The values are the spec's
// error values, so the HTTP layer maps each to a status in one table and
// passes it on as is. What is wrong with one field is a FieldCode.
type ErrorClass string

const (
	InvalidRequest       ErrorClass = "invalid_request"        // malformed, or a required field missing
	ValidationError      ErrorClass = "validation_error"       // fields with bad values; see Error.Fields
	InvalidGrant         ErrorClass = "invalid_grant"          // wrong client secret or password
	InvalidClient        ErrorClass = "invalid_client"         // client authentication missing or malformed
	InvalidToken         ErrorClass = "invalid_token"          // bearer token or API key missing or bad
	UnsupportedGrantType ErrorClass = "unsupported_grant_type" // token request with another grant
	Forbidden            ErrorClass = "forbidden"              // authenticated, but not allowed
	NotFound             ErrorClass = "not_found"
	Conflict             ErrorClass = "conflict"            // the request contradicts the current state
	QuotaExceeded        ErrorClass = "quota_exceeded"      // what the request would store does not fit the organisation's quota
	PreconditionFailed   ErrorClass = "precondition_failed" // the resource is no longer at the version the request names (If-Match)
	PayloadTooLarge      ErrorClass = "payload_too_large"   // larger than the service takes: a body, or a change too large to store
	Internal             ErrorClass = "server_error"
)

// FieldError is one problem with one field of a request.
type FieldError struct {
	Field   string    `json:"field"`
	Message string    `json:"message"`
	Code    FieldCode `json:"code"`
}

// FieldCode says what is wrong with one field of a request. The spec
// names some; the rest follow the same style. Every one is a constant of
// this type, beside the rules that use it.
type FieldCode string

// Field codes of any request.
const (
	CodeRequired      FieldCode = "REQUIRED"
	CodeInvalidFormat FieldCode = "INVALID_FORMAT"
	CodeInvalidRange  FieldCode = "INVALID_RANGE"
	CodeInvalidDate   FieldCode = "INVALID_DATE"
	CodeInvalidValue  FieldCode = "INVALID_VALUE"
	CodeTooLong       FieldCode = "TOO_LONG"
	CodeTooMany       FieldCode = "TOO_MANY"
	CodeMismatch      FieldCode = "MISMATCH"
	CodeDuplicate     FieldCode = "DUPLICATE"
)

// Error is an error a client can act on. Message is for the client;
// anything else goes into the wrapped error of the log.
type Error struct {
	Code    ErrorClass
	Message string
	Fields  []FieldError
	Reason  string // a business reason code, such as no_capacity, for events that record a refusal
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf makes an *Error.
func Errorf(code ErrorClass, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the class of err, and Internal for errors that are
// not domain errors.
func ErrorCode(err error) ErrorClass {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// ErrorMessage returns the message of err for a client, and a generic one
// for errors that are not domain errors: their text is for the log.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// Problems collects field errors while a command is validated.
type Problems []FieldError

// Add records a problem with field.
func (p *Problems) Add(field string, code FieldCode, format string, args ...any) {
	*p = append(*p, FieldError{Field: field, Message: fmt.Sprintf(format, args...), Code: code})
}

// Err is nil when there are no problems, and otherwise a validation error
// listing them all.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	msg := p[0].Field + ": " + p[0].Message
	if len(p) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(p)-1)
	}
	return &Error{Code: ValidationError, Message: msg, Fields: p}
}

// Refusal is a business refusal: a conflict with the current state that
// carries a stable reason code.
func Refusal(reason, format string, args ...any) error {
	return &Error{Code: Conflict, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// ReasonOf is the reason code of a refusal, or "".
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}
