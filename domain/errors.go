// Package domain holds Cargostream's business rules: aggregates, the pure
// decisions that turn commands into events, value types that validate
// themselves, and the error codes every layer speaks. It imports neither
// NATS nor HTTP.
package domain

import (
	"errors"
	"fmt"
)

// Code classifies an error. The values are the spec's error values, so the
// HTTP layer maps each to a status in one table and passes it on as is.
type Code string

const (
	InvalidRequest       Code = "invalid_request"        // malformed, or a required field missing
	ValidationError      Code = "validation_error"       // fields with bad values; see Error.Fields
	InvalidGrant         Code = "invalid_grant"          // wrong client secret or password
	InvalidClient        Code = "invalid_client"         // client authentication missing or malformed
	InvalidToken         Code = "invalid_token"          // bearer token or API key missing or bad
	UnsupportedGrantType Code = "unsupported_grant_type" // token request with another grant
	Forbidden            Code = "forbidden"              // authenticated, but not allowed
	NotFound             Code = "not_found"
	Conflict             Code = "conflict" // the request contradicts the current state
	Internal             Code = "server_error"
)

// FieldError is one problem with one field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	Code    string `json:"code"`
}

// Validation codes of FieldError. The spec names some; the rest follow the
// same style.
const (
	CodeRequired      = "REQUIRED"
	CodeInvalidFormat = "INVALID_FORMAT"
	CodeInvalidRange  = "INVALID_RANGE"
	CodeInvalidDate   = "INVALID_DATE"
	CodeInvalidValue  = "INVALID_VALUE"
	CodeTooLong       = "TOO_LONG"
	CodeTooMany       = "TOO_MANY"
	CodeMismatch      = "MISMATCH"
	CodeDuplicate     = "DUPLICATE"
)

// Error is an error a client can act on. Message is for the client;
// anything else goes into the wrapped error of the log.
type Error struct {
	Code    Code
	Message string
	Fields  []FieldError
	Reason  string // a business reason code, such as no_capacity, for events that record a refusal
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf makes an *Error.
func Errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, and Internal for errors that are not
// domain errors.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Problems collects field errors while a command is validated.
type Problems []FieldError

// Add records a problem with field.
func (p *Problems) Add(field, code, format string, args ...any) {
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
