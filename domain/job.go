package domain

import "time"

// Job is a piece of work for a queue: its id, under which a queue keeps it
// once, its data, and when it is due (at once when zero).
type Job struct {
	ID   string
	Data []byte
	Due  time.Time
}
